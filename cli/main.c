/* main.c: the braid command (placeholder until the language lands). */
#include <stdio.h>
int main(void) { puts("braid"); return 0; }
