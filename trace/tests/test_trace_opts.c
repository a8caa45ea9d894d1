/* test_trace_opts.c - the tracer's option parser (trace/trace_opts.c): accepted forms, values,
 * and errors that name the item and its column. */
#include <stdio.h>
#include <string.h>
#include "trace_opts.h"
#include "check.h"


static int parse(const char *t, struct trace_opts *o, char *err)
{
    return trace_opts_parse(t, o, err, 200);
}

int main(void)
{
    struct trace_opts o;
    char err[200];
    CHECK(parse("", &o, err) == 0 && o.start == TRACE_START_MARK && o.passes == 1 && !o.budget);
    CHECK(parse("task=0x22040:2464:0x9a4:3024", &o, err) == 0 && o.task_set &&
          o.task[0] == 0x22040 && o.task[1] == 2464 && o.task[3] == 3024);
    CHECK(parse("start=entry,at=0xffffffff81000000,pid=42,comm=ls,budget=5000000", &o, err) == 0);
    CHECK(o.start == TRACE_START_ENTRY && o.at == 0xffffffff81000000ull && o.pid_set && o.pid == 42 &&
          !strcmp(o.comm, "ls") && o.budget == 5000000);
    CHECK(parse("start=passes,at=0xffffffff81000010,passes=3", &o, err) == 0 && o.passes == 3);
    CHECK(parse("only=user,cr3=0x1234000,range=0x400000-0x500000,range=0x10-0x20", &o, err) == 0);
    CHECK(o.only == TRACE_ONLY_USER && o.cr3 == 0x1234000 && o.nrange == 2 && o.range[1].hi == 0x20);
    CHECK(parse("stop_at=0xffffffff81000000:0xffffffff82000000,flight=16,lstar=0xffffffff82000080", &o, err) == 0);
    CHECK(o.nstop_at == 2 && o.stop_at[1] == 0xffffffff82000000ull && o.flight_mb == 16 &&
          o.lstar == 0xffffffff82000080ull);
    CHECK(parse("checkregs=on", &o, err) == 0 && o.checkregs);
    CHECK(parse("checkregs=off", &o, err) == 0 && !o.checkregs);
    CHECK(parse("budget=1,checkregs=yes", &o, err) == -1 && strstr(err, "column 10") && strstr(err, "on or off"));
    CHECK(parse("start=boot only=kernel", &o, err) == 0 && o.start == TRACE_START_BOOT &&
          o.only == TRACE_ONLY_KERNEL);
    /* errors: item and column */
    CHECK(parse("budget=10,passes=x", &o, err) == -1);
    CHECK(strstr(err, "column 11") && strstr(err, "'passes=x'"));
    CHECK(parse("frobnicate=1", &o, err) == -1 && strstr(err, "column 1") && strstr(err, "unknown option"));
    CHECK(parse("start=later", &o, err) == -1 && strstr(err, "wants mark"));
    CHECK(parse("range=0x20-0x10", &o, err) == -1 && strstr(err, "LO < HI"));
    CHECK(parse("range=1-2,range=1-2,range=1-2,range=1-2,range=1-2", &o, err) == -1 &&
          strstr(err, "too many") && strstr(err, "column 41"));
    CHECK(parse("budget=99999999999999999999999", &o, err) == -1);      /* overflow */
    CHECK(parse("budget", &o, err) == -1 && strstr(err, "key=value"));
    CHECK(parse("start=entry", &o, err) == -1 && strstr(err, "need at="));
    CHECK(parse("start=entry,at=0x401000", &o, err) == -1 && strstr(err, "kernel address"));
    CHECK(parse("pid=3", &o, err) == -1 && strstr(err, "start=entry"));
    CHECK(parse("comm=0123456789abcdefg,start=entry,at=0xffffffff81000000", &o, err) == -1);
    CHECK(parse("stop_at=1:2:3:4:5:6:7:8:9", &o, err) == -1);
    CHECK(parse("task=1:2:3", &o, err) == -1 && strstr(err, "CURRENT:PID"));
    CHECK(parse("lstar=0x1000", &o, err) == -1);
    /* scope: what is single-stepped */
    const char *tk = "task=1:2:3:4,switch_at=0xffffffff81002000,";
    char line[200];
    snprintf(line, sizeof line, "%sscope=comm:getpid-loop,irq=out", tk);
    CHECK(parse(line, &o, err) == 0 && o.scope == TRACE_SCOPE_COMM &&
          !strcmp(o.scope_comm, "getpid-loop") && o.irq_out && o.switch_at == 0xffffffff81002000ull);
    snprintf(line, sizeof line, "%sscope=pid:42", tk);
    CHECK(parse(line, &o, err) == 0 && o.scope == TRACE_SCOPE_PID && o.scope_id == 42 && !o.irq_out);
    snprintf(line, sizeof line, "%sscope=tid:0x10,irq=in", tk);
    CHECK(parse(line, &o, err) == 0 && o.scope == TRACE_SCOPE_TID && o.scope_id == 16);
    snprintf(line, sizeof line, "%sscope=pid:x", tk);
    CHECK(parse(line, &o, err) == -1 && strstr(err, "column 43") && strstr(err, "pid:N"));
    snprintf(line, sizeof line, "%sscope=comm:0123456789abcdef", tk);
    CHECK(parse(line, &o, err) == -1 && strstr(err, "comm:NAME"));
    CHECK(parse("task=1:2:3:4,scope=pid:1", &o, err) == -1 && strstr(err, "switch_at="));
    CHECK(parse("switch_at=0xffffffff81002000,scope=pid:1", &o, err) == -1 && strstr(err, "task="));
    CHECK(parse("irq=out", &o, err) == 0 && o.irq_out && o.scope == TRACE_SCOPE_ALL);  /* step() */
    CHECK(parse("irq=maybe", &o, err) == -1 && strstr(err, "in or out"));
    CHECK(parse("switch_at=0x1000", &o, err) == -1 && strstr(err, "__switch_to"));
    /* record modes */
    CHECK(parse("budget=1", &o, err) == 0 && o.record == HVT_MODE_FULL);
    CHECK(parse("record=flow", &o, err) == 0 && o.record == HVT_MODE_FLOW);
    CHECK(parse("record=full", &o, err) == 0 && o.record == HVT_MODE_FULL);
    CHECK(parse("record=fast", &o, err) == -1 && strstr(err, "full or flow"));
    CHECK(parse("regs=rax:rdi:rsp:rflags", &o, err) == 0 && o.record == HVT_MODE_REGS &&
          o.regmask == (1u << HVT_REG_RAX | 1u << HVT_REG_RDI | 1u << HVT_REG_RSP | 1u << HVT_REG_RFLAGS));
    CHECK(parse("regs=r15", &o, err) == 0 && o.regmask == 1u << HVT_REG_R15);
    CHECK(parse("regs=rax:rip", &o, err) == -1 && strstr(err, "register names"));
    CHECK(parse("regs=rax::rbx", &o, err) == -1 && strstr(err, "register names"));
    CHECK(parse("regs=rax:", &o, err) == -1 && strstr(err, "register names"));
    CHECK(parse("regs=:rax", &o, err) == -1 && strstr(err, "register names"));
    CHECK(parse("regs=", &o, err) == -1 && strstr(err, "register names"));
    CHECK(parse("record=flow,regs=rax", &o, err) == -1 && strstr(err, "column 13") && strstr(err, "record="));
    CHECK(parse("regs=rax,record=full", &o, err) == -1 && strstr(err, "regs="));
    CHECK(parse("record=flow,checkregs=on", &o, err) == -1 && strstr(err, "checkregs=on"));
    CHECK(parse("checkregs=on,regs=rsp", &o, err) == -1 && strstr(err, "checkregs=on"));
    char small[8];
    CHECK(trace_opts_parse("zzz=1", &o, small, sizeof small) == -1 && strlen(small) == 7);
    return check_summary("test_trace_opts");
}
