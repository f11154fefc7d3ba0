/* dlopen with RUNPATH: linked with DT_RUNPATH $ORIGIN/plugins, this program loads libplug.so by
 * its bare name, which glibc finds only through the calling object's RUNPATH; then dlmopen of
 * the same name into a new link-map namespace (searched the same way). A tracer that
 * interposes dlopen changes the caller and the search fails. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "tp_coro.h"

static int use(const char *how, void *h)
{
	if (!h) {
		printf("%s: failed: %s\n", how, dlerror());
		return 1;
	}
	int (*answer)(int) = (int (*)(int))dlsym(h, "plug_answer");
	const char *(*name)(void) = (const char *(*)(void))dlsym(h, "plug_name");
	if (!answer || !name) {
		printf("%s: symbol missing: %s\n", how, dlerror());
		return 1;
	}
	printf("%s: %s answers %d\n", how, name(), answer(20));
	return 0;
}

int main(void)
{
	tp_touch_coroutine();
	int bad = use("dlopen", dlopen("libplug.so", RTLD_NOW));
	bad |= use("dlmopen", dlmopen(LM_ID_NEWLM, "libplug.so", RTLD_NOW));
	return bad;
}
