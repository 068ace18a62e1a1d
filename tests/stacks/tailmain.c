/* main that tail-calls the program's real entry (CPython's main is
 * `return Py_BytesMain(argc, argv);`, node's `return node::Start(...)`):
 * at -O2 main's frame is gone before run_program runs (a jmp, not a
 * call), so no stack contains main. sprof must still count such stacks
 * complete, rooted at run_program, because the step from run_program into
 * libc's start code is an exact CFI step (tests/stacks, tailmain). */
int run_program(int argc, char **argv);

int main(int argc, char **argv)
{
    return run_program(argc, argv);
}
