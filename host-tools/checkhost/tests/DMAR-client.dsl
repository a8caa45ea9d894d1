/*
 * A DMAR laid out as Intel client platforms of the Skylake/Broadwell era have it: a unit for
 * the integrated graphics (00:02.0) and an INCLUDE_PCI_ALL unit with the I/O APIC and HPET,
 * reserved regions for USB (00:14.0) and graphics stolen memory. Written for the recordings,
 * not dumped from a machine; `iasl DMAR-client.dsl` compiles it (length and checksum filled
 * in) into skylake-desktop/ and broadwell-laptop/root/sys/firmware/acpi/tables/DMAR.
 */
[0004]                          Signature : "DMAR"    [DMA Remapping table]
[0004]                       Table Length : 00000000
[0001]                           Revision : 01
[0001]                           Checksum : 00
[0006]                             Oem ID : "INTEL "
[0008]                       Oem Table ID : "SKL     "
[0004]                       Oem Revision : 00000001
[0004]                    Asl Compiler ID : "INTL"
[0004]              Asl Compiler Revision : 00000001

[0001]                 Host Address Width : 26
[0001]                              Flags : 01
[0010]                           Reserved : 00 00 00 00 00 00 00 00 00 00

[0002]                      Subtable Type : 0000 [Hardware Unit Definition]
[0002]                             Length : 0018
[0001]                              Flags : 00
[0001]                           Reserved : 00
[0002]                 PCI Segment Number : 0000
[0008]              Register Base Address : 00000000FED90000

[0001]                  Device Scope Type : 01 [PCI Endpoint Device]
[0001]                       Entry Length : 08
[0002]                           Reserved : 0000
[0001]                     Enumeration ID : 00
[0001]                     PCI Bus Number : 00
[0002]                           PCI Path : 02,00

[0002]                      Subtable Type : 0000 [Hardware Unit Definition]
[0002]                             Length : 0020
[0001]                              Flags : 01
[0001]                           Reserved : 00
[0002]                 PCI Segment Number : 0000
[0008]              Register Base Address : 00000000FED91000

[0001]                  Device Scope Type : 03 [IOAPIC Device]
[0001]                       Entry Length : 08
[0002]                           Reserved : 0000
[0001]                     Enumeration ID : 02
[0001]                     PCI Bus Number : F0
[0002]                           PCI Path : 1F,00

[0001]                  Device Scope Type : 04 [Message-capable HPET Device]
[0001]                       Entry Length : 08
[0002]                           Reserved : 0000
[0001]                     Enumeration ID : 00
[0001]                     PCI Bus Number : 00
[0002]                           PCI Path : 1F,00

[0002]                      Subtable Type : 0001 [Reserved Memory Region]
[0002]                             Length : 0020
[0002]                           Reserved : 0000
[0002]                 PCI Segment Number : 0000
[0008]                       Base Address : 0000000079E6E000
[0008]                End Address (limit) : 0000000079E8DFFF

[0001]                  Device Scope Type : 01 [PCI Endpoint Device]
[0001]                       Entry Length : 08
[0002]                           Reserved : 0000
[0001]                     Enumeration ID : 00
[0001]                     PCI Bus Number : 00
[0002]                           PCI Path : 14,00

[0002]                      Subtable Type : 0001 [Reserved Memory Region]
[0002]                             Length : 0020
[0002]                           Reserved : 0000
[0002]                 PCI Segment Number : 0000
[0008]                       Base Address : 000000007B800000
[0008]                End Address (limit) : 000000007FFFFFFF

[0001]                  Device Scope Type : 01 [PCI Endpoint Device]
[0001]                       Entry Length : 08
[0002]                           Reserved : 0000
[0001]                     Enumeration ID : 00
[0001]                     PCI Bus Number : 00
[0002]                           PCI Path : 02,00
