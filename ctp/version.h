#ifndef CTP_VERSION_H
#define CTP_VERSION_H

/* "ctp 0.1.0": the version every program prints with --version and writes into traces. */
const char *ctp_version_string(void);

#endif
