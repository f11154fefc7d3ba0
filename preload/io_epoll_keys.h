/* Epoll data -> fd (io_epoll_keys.c). */
#ifndef CTP_PRELOAD_IO_EPOLL_KEYS_H
#define CTP_PRELOAD_IO_EPOLL_KEYS_H

#include <stdint.h>

#include "preload/compiler.h"

/* epoll data -> fd, so that epoll_wait results can be attributed (io_epoll_keys.c). */
CTP_HIDDEN void ctp_epoll_key_set(uint64_t data, int fd);
CTP_HIDDEN int ctp_epoll_key_find(uint64_t data);

#endif
