#include "cat/export/export_pipe.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cat/export/export_batch.h"

/* A chunk is handed over when it passes this size; IN_FLIGHT chunks at most are queued. */
#define CHUNK_BYTES (256u << 10)
#define IN_FLIGHT 4

struct ctp_export_pipe {
	ctp_export_consume_fn consume;
	void *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	/* Guarded by lock: the queue of full chunks (a ring), chunks ready for reuse, state. */
	struct ctp_export_buf queue[IN_FLIGHT];
	unsigned head, count;
	struct ctp_export_buf spare[IN_FLIGHT + 1];
	unsigned nspare;
	bool busy, failed, stopping;
	/* The producer's chunk being filled. */
	struct ctp_export_buf fill;
};

/* Row encoding: table (1 byte), then per column kind (1 byte) and an int64 or a length
 * (size_t) and the bytes. Host order: it never leaves the process. */
static int encode(struct ctp_export_buf *b, enum ctp_export_table table,
		  const struct ctp_export_value *values)
{
	unsigned n = ctp_export_tables[table].ncols;
	size_t need = 1 + n * (1 + sizeof(int64_t));
	for (unsigned c = 0; c < n; c++)
		if (values[c].kind == CTP_EXPORT_STRING)
			need += sizeof(size_t) + values[c].len;
	if (ctp_export_buf_reserve(b, need) < 0)
		return -1;
	char *p = b->p + b->len;
	*p++ = (char)table;
	for (unsigned c = 0; c < n; c++) {
		const struct ctp_export_value *v = &values[c];
		*p++ = (char)v->kind;
		if (v->kind == CTP_EXPORT_INTEGER) {
			memcpy(p, &v->i, sizeof(v->i));
			p += sizeof(v->i);
		} else if (v->kind == CTP_EXPORT_STRING) {
			memcpy(p, &v->len, sizeof(v->len));
			p += sizeof(v->len);
			memcpy(p, v->s, v->len);
			p += v->len;
		}
	}
	b->len = (size_t)(p - b->p);
	return 0;
}

static int consume_chunk(struct ctp_export_pipe *pp, const struct ctp_export_buf *b)
{
	struct ctp_export_value row[CTP_EXPORT_MAX_COLUMNS];
	const char *p = b->p, *end = b->p + b->len;
	while (p < end) {
		enum ctp_export_table table = (enum ctp_export_table)(unsigned char)*p++;
		unsigned n = ctp_export_tables[table].ncols;
		for (unsigned c = 0; c < n; c++) {
			struct ctp_export_value *v = &row[c];
			v->kind = (enum ctp_export_kind)(unsigned char)*p++;
			if (v->kind == CTP_EXPORT_INTEGER) {
				memcpy(&v->i, p, sizeof(v->i));
				p += sizeof(v->i);
			} else if (v->kind == CTP_EXPORT_STRING) {
				memcpy(&v->len, p, sizeof(v->len));
				p += sizeof(v->len);
				v->s = p;
				p += v->len;
			}
		}
		if (pp->consume(pp->ctx, table, row) < 0)
			return -1;
	}
	return 0;
}

static void *pipe_thread(void *arg)
{
	struct ctp_export_pipe *pp = arg;
	pthread_mutex_lock(&pp->lock);
	for (;;) {
		while (pp->count == 0 && !pp->stopping)
			pthread_cond_wait(&pp->changed, &pp->lock);
		if (pp->stopping)
			break;
		struct ctp_export_buf chunk = pp->queue[pp->head];
		pp->busy = true;
		pthread_mutex_unlock(&pp->lock);
		int rc = pp->failed ? 0 : consume_chunk(pp, &chunk);
		pthread_mutex_lock(&pp->lock);
		if (rc < 0)
			pp->failed = true;
		chunk.len = 0;
		pp->spare[pp->nspare++] = chunk;
		pp->head = (pp->head + 1) % IN_FLIGHT;
		pp->count--;
		pp->busy = false;
		pthread_cond_broadcast(&pp->changed);
	}
	pthread_mutex_unlock(&pp->lock);
	return NULL;
}

struct ctp_export_pipe *ctp_export_pipe_start(ctp_export_consume_fn consume, void *ctx)
{
	struct ctp_export_pipe *pp = calloc(1, sizeof(*pp));
	if (!pp)
		return NULL;
	pp->consume = consume;
	pp->ctx = ctx;
	pthread_mutex_init(&pp->lock, NULL);
	pthread_cond_init(&pp->changed, NULL);
	int rc = pthread_create(&pp->thread, NULL, pipe_thread, pp);
	if (rc) {
		pthread_cond_destroy(&pp->changed);
		pthread_mutex_destroy(&pp->lock);
		free(pp);
		errno = rc;
		return NULL;
	}
	return pp;
}

/* Hands the filled chunk to the thread (waiting while IN_FLIGHT are queued) and takes a spare
 * one to fill next. */
static int submit(struct ctp_export_pipe *pp)
{
	pthread_mutex_lock(&pp->lock);
	while (pp->count == IN_FLIGHT && !pp->failed)
		pthread_cond_wait(&pp->changed, &pp->lock);
	bool failed = pp->failed;
	if (!failed) {
		pp->queue[(pp->head + pp->count) % IN_FLIGHT] = pp->fill;
		pp->count++;
		pp->fill = pp->nspare ? pp->spare[--pp->nspare] : (struct ctp_export_buf){0};
		pthread_cond_broadcast(&pp->changed);
	}
	pthread_mutex_unlock(&pp->lock);
	if (failed) {
		errno = ECANCELED;
		return -1;
	}
	return 0;
}

int ctp_export_pipe_row(struct ctp_export_pipe *pp, enum ctp_export_table table,
			const struct ctp_export_value *values)
{
	if (encode(&pp->fill, table, values) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return pp->fill.len >= CHUNK_BYTES ? submit(pp) : 0;
}

int ctp_export_pipe_drain(struct ctp_export_pipe *pp)
{
	if (pp->fill.len && submit(pp) < 0)
		return -1;
	pthread_mutex_lock(&pp->lock);
	while ((pp->count || pp->busy) && !pp->failed)
		pthread_cond_wait(&pp->changed, &pp->lock);
	bool failed = pp->failed;
	pthread_mutex_unlock(&pp->lock);
	if (failed) {
		errno = ECANCELED;
		return -1;
	}
	return 0;
}

void ctp_export_pipe_stop(struct ctp_export_pipe *pp)
{
	if (!pp)
		return;
	pthread_mutex_lock(&pp->lock);
	pp->stopping = true;
	pthread_cond_broadcast(&pp->changed);
	pthread_mutex_unlock(&pp->lock);
	pthread_join(pp->thread, NULL);
	for (unsigned i = 0; i < pp->count; i++)
		ctp_export_buf_free(&pp->queue[(pp->head + i) % IN_FLIGHT]);
	for (unsigned i = 0; i < pp->nspare; i++)
		ctp_export_buf_free(&pp->spare[i]);
	ctp_export_buf_free(&pp->fill);
	pthread_cond_destroy(&pp->changed);
	pthread_mutex_destroy(&pp->lock);
	free(pp);
}
