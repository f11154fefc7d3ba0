/* A server that starts as root and changes its user keeps everything it starts afterwards in the
 * trace. Fork children and the images it execs itself get a connection through the process's own
 * (connection.c), but a child that glibc starts inside system() or popen() (posix_spawn within
 * libc, which no hook sees), or that a library starts with raw syscalls, connects by the socket's
 * path: in a run directory private to the collector's user (0700, the socket 0600), refused.
 *
 * So just before the process changes its user, while it still may, it grants the user it changes
 * to what connecting needs and nothing more: search on the run directory and write on the
 * socket, each by a POSIX ACL entry for that user alone. Only a run directory ctp made (ctp-run's
 * `ctp-run.PID.XXXXXX`, the plain form's `ctp-PID-XXXXXX`) and this process's user owns; a socket a
 * user named with CTP_SOCKET elsewhere is left as it is. Where the grant cannot be made (a file
 * system without ACLs, a private directory above the run directory), children connect as
 * before: the handover where a hook sees them, else untraced. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "preload/compiler.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/threads.h"

#define ACL_ACCESS_XATTR "system.posix_acl_access"

enum { MAX_ACL_ENTRIES = 64, MAX_GRANTED = 8 };

struct acl {
	struct posix_acl_xattr_header h;
	struct posix_acl_xattr_entry e[MAX_ACL_ENTRIES];
	size_t count;
};

static void acl_add(struct acl *a, uint16_t tag, uint32_t id, uint16_t perm)
{
	a->e[a->count++] = (struct posix_acl_xattr_entry){htole16(tag), htole16(perm), htole32(id)};
}

/* A file whose ACL is read and written: by an fd when fd >= 0, else by its path, which is not
 * followed if it is a symbolic link. */
struct acl_file {
	int fd;
	const char *path;
};

static long acl_get(struct acl_file f, void *buf, size_t len)
{
	return f.fd >= 0 ? syscall(SYS_fgetxattr, f.fd, ACL_ACCESS_XATTR, buf, len)
			 : syscall(SYS_lgetxattr, f.path, ACL_ACCESS_XATTR, buf, len);
}

static bool acl_set(struct acl_file f, const void *buf, size_t len)
{
	return (f.fd >= 0 ? syscall(SYS_fsetxattr, f.fd, ACL_ACCESS_XATTR, buf, len, 0)
			  : syscall(SYS_lsetxattr, f.path, ACL_ACCESS_XATTR, buf, len, 0)) == 0;
}

static bool acl_stat(struct acl_file f, struct stat *st)
{
	return (f.fd >= 0
			? syscall(SYS_fstat, f.fd, st)
			: syscall(SYS_newfstatat, AT_FDCWD, f.path, st, AT_SYMLINK_NOFOLLOW)) == 0;
}

/* The file's access ACL, or the one its mode bits mean when it has none. */
static bool acl_read(struct acl_file f, const struct stat *st, struct acl *a)
{
	a->count = 0;
	long n = acl_get(f, &a->h, sizeof(a->h) + sizeof(a->e));
	if (n < 0 && errno == ENODATA) {
		acl_add(a, ACL_USER_OBJ, (uint32_t)ACL_UNDEFINED_ID, (st->st_mode >> 6) & 7);
		acl_add(a, ACL_GROUP_OBJ, (uint32_t)ACL_UNDEFINED_ID, (st->st_mode >> 3) & 7);
		acl_add(a, ACL_OTHER, (uint32_t)ACL_UNDEFINED_ID, st->st_mode & 7);
		a->h.a_version = htole32(POSIX_ACL_XATTR_VERSION);
		return true;
	}
	if (n < (long)sizeof(a->h) || (n - sizeof(a->h)) % sizeof(a->e[0]) ||
	    le32toh(a->h.a_version) != POSIX_ACL_XATTR_VERSION)
		return false;
	a->count = (n - sizeof(a->h)) / sizeof(a->e[0]);
	return true;
}

static struct posix_acl_xattr_entry *acl_find(struct acl *a, uint16_t tag, uint32_t id)
{
	for (size_t i = 0; i < a->count; i++)
		if (le16toh(a->e[i].e_tag) == tag &&
		    (tag != ACL_USER || le32toh(a->e[i].e_id) == id))
			return &a->e[i];
	return NULL;
}

static int by_tag_then_id(const struct posix_acl_xattr_entry *x,
			  const struct posix_acl_xattr_entry *y)
{
	if (x->e_tag != y->e_tag)
		return le16toh(x->e_tag) < le16toh(y->e_tag) ? -1 : 1;
	return le32toh(x->e_id) < le32toh(y->e_id) ? -1 : le32toh(x->e_id) > le32toh(y->e_id);
}

/* The kernel takes the entries in order of tag, then id (a few: insertion sort, no malloc). */
static void acl_sort(struct acl *a)
{
	for (size_t i = 1; i < a->count; i++)
		for (size_t j = i; j > 0 && by_tag_then_id(&a->e[j - 1], &a->e[j]) > 0; j--) {
			struct posix_acl_xattr_entry t = a->e[j];
			a->e[j] = a->e[j - 1];
			a->e[j - 1] = t;
		}
}

/* Gives user `uid` the permissions `perm` on f, and widens the mask to let them through (which
 * also lets them through for any other named entry: the run directory has none of its own, only
 * what a default ACL of its parent's may have given it). */
static bool grant(struct acl_file f, uint32_t uid, uint16_t perm)
{
	struct stat st;
	struct acl a;
	if (!acl_stat(f, &st) || !acl_read(f, &st, &a))
		return false;
	struct posix_acl_xattr_entry *user = acl_find(&a, ACL_USER, uid);
	struct posix_acl_xattr_entry *mask = acl_find(&a, ACL_MASK, 0);
	if (user && (le16toh(user->e_perm) & perm) == perm && mask &&
	    (le16toh(mask->e_perm) & perm) == perm)
		return true;
	if (a.count + 2 > MAX_ACL_ENTRIES)
		return false;
	if (user)
		user->e_perm = htole16(le16toh(user->e_perm) | perm);
	else
		acl_add(&a, ACL_USER, uid, perm);
	if (mask) {
		mask->e_perm = htole16(le16toh(mask->e_perm) | perm);
	} else {
		/* A new mask lets through what the group class had, and the new entry. */
		uint16_t through = perm;
		for (size_t i = 0; i < a.count; i++)
			if (le16toh(a.e[i].e_tag) & (ACL_GROUP_OBJ | ACL_GROUP | ACL_USER))
				through |= le16toh(a.e[i].e_perm);
		acl_add(&a, ACL_MASK, (uint32_t)ACL_UNDEFINED_ID, through);
	}
	acl_sort(&a);
	return acl_set(f, &a.h, sizeof(a.h) + a.count * sizeof(a.e[0]));
}

/* The run directory of the socket at `path`, open (not through a symbolic link), if ctp made
 * it and this process's user owns it; else -1. */
static int open_own_run_dir(const char *path)
{
	char dir[4096];
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash || strcmp(slash, "/sock") != 0 || (size_t)(slash - path) >= sizeof(dir))
		return -1;
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	const char *name = strrchr(dir, '/');
	if (!name || strncmp(name + 1, "ctp-", 4) != 0)
		return -1;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, dir,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 &&
	    (syscall(SYS_fstat, fd, &st) != 0 || st.st_uid != (uid_t)syscall(SYS_geteuid))) {
		syscall(SYS_close, fd);
		fd = -1;
	}
	return fd;
}

/* Users granted already (not from a vfork child, which must not write its parent's memory). */
static uint32_t granted[MAX_GRANTED];
static int granted_count;

/* Before a change of the effective (file system) user to uid, which may then not reach the
 * collector's socket. */
static void grant_new_user(uid_t uid)
{
	int saved = errno;
	uid_t euid = (uid_t)syscall(SYS_geteuid);
	if (uid == (uid_t)-1 || uid == euid || uid == 0 ||
	    __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING)
		goto out;
	for (int i = 0; i < __atomic_load_n(&granted_count, __ATOMIC_ACQUIRE); i++)
		if (granted[i] == uid)
			goto out;
	const char *path = ctp_proc.config.socket_path;
	int dir = open_own_run_dir(path);
	if (dir < 0)
		goto out;
	/* Each grant reads, changes and writes an ACL: processes that change their users at once
	 * (a server's workers, each to its own) take turns, or one's entry would be lost. */
	syscall(SYS_flock, dir, LOCK_EX);
	bool done = grant((struct acl_file){dir, NULL}, uid, ACL_EXECUTE) &&
		    grant((struct acl_file){-1, path}, uid, ACL_WRITE);
	syscall(SYS_close, dir); /* and the lock with it */
	/* Two threads may both note the same user: it is looked up twice, no more. */
	int n = __atomic_load_n(&granted_count, __ATOMIC_ACQUIRE);
	if (done && !ctp_in_vfork_child() && n < MAX_GRANTED) {
		granted[n] = uid;
		__atomic_store_n(&granted_count, n + 1, __ATOMIC_RELEASE);
	}
out:
	errno = saved;
}

CTP_EXPORT int setuid(uid_t uid)
{
	CTP_REAL(setuid);
	grant_new_user(uid);
	return real_setuid(uid);
}

CTP_EXPORT int seteuid(uid_t euid)
{
	CTP_REAL(seteuid);
	grant_new_user(euid);
	return real_seteuid(euid);
}

CTP_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	CTP_REAL(setreuid);
	grant_new_user(euid); /* the real user alone does not decide what a process may open */
	return real_setreuid(ruid, euid);
}

CTP_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	CTP_REAL(setresuid);
	grant_new_user(euid);
	return real_setresuid(ruid, euid, suid);
}

CTP_EXPORT int setfsuid(uid_t fsuid)
{
	CTP_REAL(setfsuid);
	grant_new_user(fsuid);
	return real_setfsuid(fsuid);
}
