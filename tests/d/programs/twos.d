/* fires: 3  args: -s ${P}/twos/a.d -s ${P}/twos/b.d */
BEGIN { printf("from -n\n"); }
