/* A deliberate heap overflow, built with the same flags as the *_asan tests: ctest expects
 * AddressSanitizer to report it, which proves those flags really instrument. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    (void)argv;
    volatile char *p = malloc(8);
    if (!p) return 2;
    p[8 + argc - 1] = 'x'; /* one byte past the end */
    printf("not caught: %c\n", p[8 + argc - 1]);
    free((void *)p);
    return 0;
}
