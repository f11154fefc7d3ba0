/* DWARF side of the symbolizer: file and line of an address, from the line table of the
 * compilation unit that covers it. libdw is used directly rather than through libdwfl, whose
 * standard debuginfo search may reach out to debuginfod servers from the collector. */
#include "ctp/symbolize_internal.h"

#include <dwarf.h>

/* The unit whose ranges contain vaddr, by a walk over all units: for objects built without
 * .debug_aranges (dwarf_addrdie depends on it). */
static bool find_unit_by_ranges(Dwarf *dbg, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_CU *unit = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(dbg, unit, &unit, NULL, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		if (dwarf_haspc(&cudie, vaddr) > 0) {
			*cu = cudie;
			return true;
		}
	}
	return false;
}

static bool has_aranges(Dwarf *dbg)
{
	Dwarf_Aranges *aranges;
	size_t n = 0;
	return dwarf_getaranges(dbg, &aranges, &n) == 0 && n > 0;
}

bool ctp_dwarf_line(Dwarf *dbg, uint64_t vaddr, const char **file, int *line)
{
	Dwarf_Die cu;
	if (dwarf_addrdie(dbg, vaddr, &cu) == NULL) {
		/* With aranges present a miss is a real miss; the walk is only for objects without
		 * them (dwarf_getaranges caches its result, so asking again is cheap). */
		if (has_aranges(dbg) || !find_unit_by_ranges(dbg, vaddr, &cu))
			return false;
	}
	Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr);
	if (l == NULL)
		return false;
	const char *name = dwarf_linesrc(l, NULL, NULL);
	int lineno = 0;
	if (name == NULL || dwarf_lineno(l, &lineno) != 0)
		return false;
	*file = name;
	*line = lineno;
	return true;
}
