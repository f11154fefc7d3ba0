/* A healthy GNU Pth program: 20 threads yield a few times and return, main joins them and shuts
 * Pth down (pth_kill closes the scheduler's wake-up pipe, which the scheduler polled on every
 * dispatch). Nothing waits on any fd here. */
#include <pth.h>
#include <stdio.h>
static void *w(void *a)
{
	for (int i = 0; i < 3; i++)
		pth_yield(NULL);
	return a;
}
int main(void)
{
	pth_init();
	pth_t t[20];
	for (int i = 0; i < 20; i++)
		t[i] = pth_spawn(PTH_ATTR_DEFAULT, w, NULL);
	for (int i = 0; i < 20; i++)
		pth_join(t[i], NULL);
	pth_kill();
	printf("done\n");
	return 0;
}
