/* The plugin of the dlopen case: found only through its loader's RUNPATH. */
int plug_answer(int x)
{
	return 2 * x + 1;
}

const char *plug_name(void)
{
	return "libplug";
}
