#include "ctp/version.h"

const char *ctp_version_string(void)
{
	return "ctp " CTP_VERSION_TEXT;
}
