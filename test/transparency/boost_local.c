/* Boost.Context inside a plugin loaded RTLD_NOW|RTLD_LOCAL (path in argv[1]): a C program that
 * does not link Boost itself calls the plugin, which runs a generator on fibers, then unloads it
 * (its modules are gone before the process ends). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	int (*run)(char *, int) = (int (*)(char *, int))dlsym(h, "boost_plugin_run");
	if (!run) {
		printf("no boost_plugin_run\n");
		return 1;
	}
	char buf[256] = "";
	int sum = run(buf, sizeof(buf));
	printf("generator: %s\nsum: %d\n", buf, sum);
	sum = run(buf, sizeof(buf));
	printf("again: %d\n", sum);
	printf("dlclose: %d\n", dlclose(h));
	return 0;
}
