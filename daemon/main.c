/*
 * uncored: entry point.  (Placeholder until the start-up sequence lands.)
 */
#include <stdio.h>

#include "config.h"

int main(void)
{
	printf("uncored %s\n", UNCORED_VERSION);
	return 0;
}
