// The SMS-confirmed transfer's structure and nothing else: the floor any implementation of
// it pays on this machine. Five processes (client, gateway, accounts, identity, verification)
// on loopback TCP, the same eight calls between them and the same seven SQLite transactions
// (accounts: reserve without waiting for the disk, attach, book; verification: start, the
// delivery's outcome without waiting for the disk, check; two reads), in WAL mode with group
// commit: a commit is made under the database's one writer lock, and one fdatasync of the WAL
// then covers every commit made before it. Nothing else: 64-byte binary messages instead of
// JSON, no tokens, hashes, codes, logs or metrics, a thread per connection (no hand-off from
// an event loop to a worker), statements compiled once, the client never waits for the SMS.
// Prints the bare synchronous=FULL commit rate (single thread, before and after) and the
// skeleton's transfers per second at CONNECTIONS clients, as `latchkey bench transfer` does.
// Knobs (environment, 0 turns off): GATEWAY (clients call accounts directly), IDENTITY and
// VERIFICATION (accounts does their work itself, in its own database), GROUP (0: every
// durable commit waits for its own fsync, synchronous=FULL), NOSYNC=1 (no commit waits for the
// disk), ATTACH (0: accounts writes the transfer once, after the code started), OUTCOME (0: the
// delivery records nothing after the send; not safe, a map of what a transaction costs), LOOPS=1
// (each process as the services' design runs it: one epoll loop reads every connection and hands
// each request to a pool of 16 workers, which answer on the socket themselves; a worker's call to
// another service is sent by the worker and its answer read by the loop, which wakes the worker;
// the gateway forwards on its loop alone, with no workers, over one connection to accounts).
// REPLY=1 (with LOOPS=1): a worker hands its answer back to the loop, which writes it, as the
// services' channels are the loop's alone: queued, and the loop woken through an eventfd unless
// a wake is already pending. UNIX=1: the calls between services go over Unix-domain sockets
// (clients still reach the gateway over TCP; TCP_NODELAY set on an accepted one fails, unheeded).
// Usage: bench/transfer-floor.sh [SECONDS] [CONNECTIONS]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MSG = 64 };
enum { OP_INTROSPECT = 1, OP_START, OP_CHECK, OP_TRANSFER, OP_CONFIRM };
typedef struct { uint32_t op; uint64_t a, b; char pad[MSG - 20]; } __attribute__((packed)) msg_t;

static const char *dir;
static int base_port;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void die(const char *w) { perror(w); exit(1); }

// All of `n` bytes, on a blocking socket or (LOOPS=1) a non-blocking one, waiting in poll
// while it is full.
static int full(int fd, void *b, size_t n, int wr) {
    size_t d = 0;
    while (d < n) {
        ssize_t r = wr ? write(fd, (char *)b + d, n - d) : read(fd, (char *)b + d, n - d);
        if (r < 0 && errno == EAGAIN) { struct pollfd p = {fd, wr ? POLLOUT : POLLIN, 0}; poll(&p, 1, -1); continue; }
        if (r <= 0) { if (r < 0 && errno == EINTR) continue; return -1; }
        d += r;
    }
    return 0;
}
static int use_unix = 0;
// Where `port` is served: loopback TCP, or (UNIX=1, a service's port) a socket file in DIR.
static socklen_t address(int port, struct sockaddr_storage *s) {
    memset(s, 0, sizeof *s);
    if (use_unix && port != base_port) {
        struct sockaddr_un *a = (void *)s; a->sun_family = AF_UNIX;
        snprintf(a->sun_path, sizeof a->sun_path, "%s/%d.sock", dir, port);
        return sizeof *a;
    }
    struct sockaddr_in *a = (void *)s;
    *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    return sizeof *a;
}
static int dial(int port) {
    struct sockaddr_storage a; socklen_t length = address(port, &a);
    int fd = socket(a.ss_family, SOCK_STREAM, 0), one = 1;
    for (int i = 0; i < 500; i++) { if (connect(fd, (void *)&a, length) == 0) break; usleep(10000); }
    if (a.ss_family == AF_INET) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}
static void call(int fd, msg_t *m) { if (full(fd, m, MSG, 1) || full(fd, m, MSG, 0)) die("call"); }

static sqlite3 *opendb(const char *name) {
    char p[512]; snprintf(p, sizeof p, "%s/%s.db", dir, name);
    sqlite3 *db; if (sqlite3_open(p, &db)) die("open");
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=10000;", 0, 0, 0);
    return db;
}
static void exec(sqlite3 *db, const char *sql) { char *e = 0; if (sqlite3_exec(db, sql, 0, 0, &e)) { fprintf(stderr, "%s: %s\n", sql, e); exit(1); } }
// Statements compiled once per connection and thread (keyed by the SQL literal's address).
static __thread struct { sqlite3 *db; const char *sql; sqlite3_stmt *stmt; } cache[32];
static sqlite3_stmt *prepared(sqlite3 *db, const char *sql) {
    for (int i = 0; i < 32; i++) {
        if (cache[i].db == db && cache[i].sql == sql) return cache[i].stmt;
        if (!cache[i].db) {
            if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &cache[i].stmt, 0)) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); exit(1); }
            cache[i].db = db; cache[i].sql = sql; return cache[i].stmt;
        }
    }
    fprintf(stderr, "statement cache full\n"); exit(1);
}
static void run(sqlite3 *db, const char *sql, int64_t x, int64_t y) {
    sqlite3_stmt *s = prepared(db, sql);
    sqlite3_bind_int64(s, 1, x); sqlite3_bind_int64(s, 2, y);
    while (sqlite3_step(s) == SQLITE_ROW) {}
    sqlite3_reset(s);
}
// One writer per database, as the services have.
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
// Group commit: commit without waiting for the disk under the writer lock, then one fdatasync of
// the WAL covers every commit made before it (GROUP=0: each commit waits for its own, FULL).
static int group = 1, no_sync = 0, wal_fd = -1;
static pthread_mutex_t syncer = PTHREAD_MUTEX_INITIALIZER;
static int64_t committed, synced;
static void txn(sqlite3 *db, int durable, void (*body)(sqlite3 *, msg_t *), msg_t *m) {
    pthread_mutex_lock(&writer);
    static __thread sqlite3 *configured;
    if (configured != db) { exec(db, group ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL"); configured = db; }
    run(db, "BEGIN IMMEDIATE", 0, 0); body(db, m); run(db, "COMMIT", 0, 0);
    int64_t mine = ++committed;
    pthread_mutex_unlock(&writer);
    if (!durable || !group || no_sync) return;
    pthread_mutex_lock(&syncer);
    if (synced < mine) {
        pthread_mutex_lock(&writer); int64_t target = committed; pthread_mutex_unlock(&writer);
        if (fdatasync(wal_fd)) die("fdatasync");
        synced = target;
    }
    pthread_mutex_unlock(&syncer);
}
static void open_wal(const char *name) {
    sqlite3 *keep = opendb(name); exec(keep, "BEGIN IMMEDIATE; COMMIT;");  // kept open: the WAL stays
    char p[512]; snprintf(p, sizeof p, "%s/%s.db-wal", dir, name);
    wal_fd = open(p, O_RDWR); if (wal_fd < 0) die("open wal");
}

typedef void (*handler_t)(sqlite3 *db, int *up, msg_t *m);

// LOOPS=1: one epoll loop per process and a pool of workers (see the header).
enum { WORKERS = 16, MAX_FDS = 4096 };
static int use_loops = 0;
static handler_t loop_handler;
static int loop_up[2] = {-1, -1};
static pthread_mutex_t up_writing[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static struct { int len, upstream; pthread_mutex_t writing; char buf[MSG]; } fds[MAX_FDS];
static struct { int fd; msg_t m; } jobs[4096];
static int jobs_head, jobs_tail;
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_ready = PTHREAD_COND_INITIALIZER;
// A worker waits for its one call in flight; the call's `b` names the worker.
static struct { pthread_mutex_t mu; pthread_cond_t cv; int ready; msg_t reply; } waiters[WORKERS];
static __thread int worker_index = -1;
// REPLY=1: answers on their way back to the loop.
static int reply_via_loop = 0, reply_wake = -1, reply_wake_pending;
static struct { int fd; msg_t m; } replies[4096];
static int replies_head, replies_tail;
static pthread_mutex_t replies_lock = PTHREAD_MUTEX_INITIALIZER;

static void send_all(int fd, msg_t *m) { if (full(fd, m, MSG, 1)) die("send"); }
// A call to another service: blocking on its own connection, or (LOOPS=1) sent by this worker
// and answered through the loop.
static void upcall(int *up, int i, msg_t *m) {
    if (!use_loops) { call(up[i], m); return; }
    if (worker_index < 0) die("a call from outside the workers");
    typeof(waiters[0]) *w = &waiters[worker_index];
    m->b = worker_index;
    pthread_mutex_lock(&w->mu); w->ready = 0; pthread_mutex_unlock(&w->mu);
    pthread_mutex_lock(&up_writing[i]); send_all(loop_up[i], m); pthread_mutex_unlock(&up_writing[i]);
    pthread_mutex_lock(&w->mu);
    while (!w->ready) pthread_cond_wait(&w->cv, &w->mu);
    *m = w->reply;
    pthread_mutex_unlock(&w->mu);
}
typedef struct { int fd; handler_t h; const char *db; int ups[2]; } conn_t;
static void serve_loop(int listener, handler_t h, const char *db, int up0, int up1);
static void *serve_conn(void *arg) {
    conn_t *c = arg; sqlite3 *db = c->db ? opendb(c->db) : 0; int up[2];
    for (int i = 0; i < 2; i++) up[i] = c->ups[i] ? dial(c->ups[i]) : -1;
    msg_t m;
    while (full(c->fd, &m, MSG, 0) == 0) { c->h(db, up, &m); if (full(c->fd, &m, MSG, 1)) break; }
    close(c->fd); free(c); return 0;
}
static void serve(int port, handler_t h, const char *db, int up0, int up1) {
    struct sockaddr_storage a; socklen_t length = address(port, &a);
    int l = socket(a.ss_family, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (void *)&a, length) || listen(l, 64)) die("listen");
    if (use_loops) serve_loop(l, h, db, up0, up1);
    for (;;) {
        int fd = accept(l, 0, 0); if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = malloc(sizeof *c); *c = (conn_t){fd, h, db, {up0, up1}};
        pthread_t t; pthread_create(&t, 0, serve_conn, c); pthread_detach(t);
    }
}

// identity: a session read per introspection.
static void identity(sqlite3 *db, int *up, msg_t *m) {
    (void)up; run(db, "BEGIN", 0, 0); run(db, "SELECT user_id FROM sessions WHERE token = ?1", m->a % 100, 0); run(db, "COMMIT", 0, 0);
}
static int use_identity = 1, use_verification = 1, use_gateway = 1, use_attach = 1, use_outcome = 1;
// verification: start (durable; its message handed to a delivery thread, which sends and then
// records the outcome without waiting for the disk) and check (durable).
static pthread_mutex_t dq = PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t dqc = PTHREAD_COND_INITIALIZER;
static int64_t dq_items[4096]; static int dq_head, dq_tail;
static void v_start(sqlite3 *db, msg_t *m) {
    run(db, "INSERT INTO requests (id, dest, status, created) VALUES (?1, ?2, 'pending', ?1)", m->a, m->a % 100);
    run(db, "INSERT INTO deliveries (id, request_id, state) VALUES (?1, ?1, 'sending')", m->a, 0);
}
static void v_check(sqlite3 *db, msg_t *m) {
    run(db, "UPDATE requests SET status = 'verified' WHERE id = ?1", m->a, 0);
    run(db, "INSERT INTO events (request_id, kind) VALUES (?1, 'verified')", m->a, 0);
}
static void v_outcome(sqlite3 *db, msg_t *m) {
    run(db, "DELETE FROM deliveries WHERE id = ?1", m->a, 0);
    run(db, "INSERT INTO events (request_id, kind) VALUES (?1, 'sent')", m->a, 0);
}
static void *delivery(void *arg) {
    (void)arg; sqlite3 *db = opendb(use_verification ? "verification" : "accounts"); char path[512]; snprintf(path, sizeof path, "%s/outbox", dir);
    for (;;) {
        pthread_mutex_lock(&dq); while (dq_head == dq_tail) pthread_cond_wait(&dqc, &dq);
        int64_t id = dq_items[dq_head++ % 4096]; pthread_mutex_unlock(&dq);
        FILE *f = fopen(path, "a"); fprintf(f, "%lld 123456\n", (long long)id); fclose(f);
        msg_t m = {.a = id};
        if (use_outcome) txn(db, 0, v_outcome, &m);
    }
    return 0;
}
static void verification(sqlite3 *db, int *up, msg_t *m) {
    (void)up;
    if (m->op == OP_START) {
        txn(db, 1, v_start, m);
        pthread_mutex_lock(&dq);
        if (dq_tail - dq_head == 4096) die("delivery queue full");
        dq_items[dq_tail++ % 4096] = m->a; pthread_cond_signal(&dqc); pthread_mutex_unlock(&dq);
    } else txn(db, 1, v_check, m);
}
// accounts: reserve (not durable), start the code, attach (durable); confirm: read, check, book.
// ATTACH=0: the code is started first and the transfer written once, with it (durable).
static void a_reserve(sqlite3 *db, msg_t *m) { run(db, "INSERT INTO transfers (id, user_id, key, state) VALUES (?1, ?2, ?1, 'pending')", m->a, m->a % 100); }
static void a_attach(sqlite3 *db, msg_t *m) { run(db, "UPDATE transfers SET request_id = ?1 WHERE id = ?1", m->a, 0); }
static void a_complete(sqlite3 *db, msg_t *m) {
    run(db, "UPDATE transfers SET state = 'done' WHERE id = ?1 AND state = 'pending'", m->a, 0);
    run(db, "UPDATE accounts SET balance = balance - 1 WHERE id = ?1", (m->a % 100) * 2, 0);
    run(db, "UPDATE accounts SET balance = balance + 1 WHERE id = ?1", (m->a % 100) * 2 + 1, 0);
    run(db, "INSERT INTO ledger (transfer_id, account_id, amount) VALUES (?1, ?2, -1)", m->a, (m->a % 100) * 2);
    run(db, "INSERT INTO ledger (transfer_id, account_id, amount) VALUES (?1, ?2, 1)", m->a, (m->a % 100) * 2 + 1);
}
static void introspect(sqlite3 *db, int *up, msg_t *m) {
    msg_t r = *m; r.op = OP_INTROSPECT;
    if (use_identity) upcall(up, 0, &r); else identity(db, up, &r);
}
static void verify(sqlite3 *db, int *up, msg_t *m, int op) {
    msg_t r = *m; r.op = op;
    if (use_verification) upcall(up, 1, &r); else verification(db, up, &r);
}
static void accounts(sqlite3 *db, int *up, msg_t *m) {
    if (m->op == OP_TRANSFER) {
        introspect(db, up, m);
        if (use_attach) {
            txn(db, 0, a_reserve, m);
            verify(db, up, m, OP_START);
            txn(db, 1, a_attach, m);
        } else {
            verify(db, up, m, OP_START);
            txn(db, 1, a_reserve, m);
        }
    } else {
        run(db, "BEGIN", 0, 0); run(db, "SELECT state FROM transfers WHERE id = ?1", m->a, 0); run(db, "COMMIT", 0, 0);
        introspect(db, up, m);
        verify(db, up, m, OP_CHECK);
        txn(db, 1, a_complete, m);
    }
}
static void gateway(sqlite3 *db, int *up, msg_t *m) { (void)db; call(up[0], m); }

static const char *loop_db_name;
static void *worker(void *arg) {
    worker_index = (int)(intptr_t)arg;
    sqlite3 *db = loop_db_name ? opendb(loop_db_name) : 0;
    for (;;) {
        pthread_mutex_lock(&jobs_lock);
        while (jobs_head == jobs_tail) pthread_cond_wait(&jobs_ready, &jobs_lock);
        int fd = jobs[jobs_head % 4096].fd; msg_t m = jobs[jobs_head % 4096].m; jobs_head++;
        pthread_mutex_unlock(&jobs_lock);
        loop_handler(db, loop_up, &m);
        if (reply_via_loop) {
            pthread_mutex_lock(&replies_lock);
            if (replies_tail - replies_head == 4096) die("reply queue full");
            replies[replies_tail % 4096].fd = fd; replies[replies_tail % 4096].m = m; replies_tail++;
            int wake = !reply_wake_pending; reply_wake_pending = 1;
            pthread_mutex_unlock(&replies_lock);
            uint64_t one = 1;
            if (wake && write(reply_wake, &one, sizeof one) != sizeof one) die("eventfd");
            continue;
        }
        pthread_mutex_lock(&fds[fd].writing); send_all(fd, &m); pthread_mutex_unlock(&fds[fd].writing);
    }
    return 0;
}
static void watch(int ep, int fd, int upstream) {
    if (fd >= MAX_FDS) die("too many descriptors");
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fds[fd].len = 0; fds[fd].upstream = upstream; pthread_mutex_init(&fds[fd].writing, 0);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) die("epoll_ctl");
}
// One message read whole from `fd` on the loop: a request, or an answer to one of ours.
static void arrived(int fd, msg_t *m) {
    if (loop_handler == gateway) {
        // Forward on the loop, no worker: the request carries its client's socket out and back.
        if (fds[fd].upstream) { int client = (int)m->b; send_all(client, m); }
        else { m->b = fd; send_all(loop_up[0], m); }
        return;
    }
    if (fds[fd].upstream) {
        typeof(waiters[0]) *w = &waiters[m->b];
        pthread_mutex_lock(&w->mu); w->reply = *m; w->ready = 1; pthread_cond_signal(&w->cv); pthread_mutex_unlock(&w->mu);
        return;
    }
    pthread_mutex_lock(&jobs_lock);
    if (jobs_tail - jobs_head == 4096) die("job queue full");
    jobs[jobs_tail % 4096].fd = fd; jobs[jobs_tail % 4096].m = *m; jobs_tail++;
    pthread_cond_signal(&jobs_ready);
    pthread_mutex_unlock(&jobs_lock);
}
static void serve_loop(int l, handler_t h, const char *db, int up0, int up1) {
    int ep = epoll_create1(0), one = 1;
    loop_handler = h; loop_db_name = db;
    for (int i = 0; i < WORKERS; i++) { pthread_mutex_init(&waiters[i].mu, 0); pthread_cond_init(&waiters[i].cv, 0); }
    int ups[2] = {up0, up1};
    for (int i = 0; i < 2; i++) if (ups[i]) { loop_up[i] = dial(ups[i]); watch(ep, loop_up[i], 1); }
    if (h != gateway) for (int i = 0; i < WORKERS; i++) { pthread_t t; pthread_create(&t, 0, worker, (void *)(intptr_t)i); pthread_detach(t); }
    fcntl(l, F_SETFL, fcntl(l, F_GETFL) | O_NONBLOCK);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = l};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, l, &e)) die("epoll_ctl");
    if (reply_via_loop) {
        reply_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event w = {.events = EPOLLIN, .data.fd = reply_wake};
        if (reply_wake < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, reply_wake, &w)) die("eventfd");
    }
    struct epoll_event ready[64];
    for (;;) {
        int n = epoll_wait(ep, ready, 64, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == reply_wake) {
                uint64_t count; if (read(reply_wake, &count, sizeof count) < 0 && errno != EAGAIN) die("eventfd");
                pthread_mutex_lock(&replies_lock);
                int from = replies_head, to = replies_tail; replies_head = to; reply_wake_pending = 0;
                pthread_mutex_unlock(&replies_lock);
                // Slots read here are free for new answers, but a client waits for its answer before it
                // asks again, so at most one answer per client is in the ring: none is overwritten.
                for (int k = from; k < to; k++) send_all(replies[k % 4096].fd, &replies[k % 4096].m);
                continue;
            }
            if (fd == l) {
                int c;
                while ((c = accept(l, 0, 0)) >= 0) { setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); watch(ep, c, 0); }
                continue;
            }
            for (;;) {
                ssize_t r = read(fd, fds[fd].buf + fds[fd].len, MSG - fds[fd].len);
                if (r > 0) {
                    fds[fd].len += r;
                    if (fds[fd].len == MSG) { msg_t m; memcpy(&m, fds[fd].buf, MSG); fds[fd].len = 0; arrived(fd, &m); }
                    continue;
                }
                if (r < 0 && errno == EINTR) continue;
                if (r < 0 && errno == EAGAIN) break;
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, 0); close(fd); break;  // the peer went away
            }
        }
    }
}

static volatile int stop; static long done_count; static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER; static int64_t next_id;
static void *client(void *arg) {
    (void)arg; int fd = dial(use_gateway ? base_port : base_port + 1);
    while (!stop) {
        pthread_mutex_lock(&cm); int64_t id = ++next_id; pthread_mutex_unlock(&cm);
        msg_t m = {.op = OP_TRANSFER, .a = id}; call(fd, &m);
        m = (msg_t){.op = OP_CONFIRM, .a = id}; call(fd, &m);
        pthread_mutex_lock(&cm); done_count++; pthread_mutex_unlock(&cm);
    }
    return 0;
}
// Single-row commits, synchronous=FULL, timed once the WAL has reached its checkpoint size (as
// `latchkey bench`'s probe: a fresh file's commits each extend the log and run at half the rate).
// CPU time (user + system) of a process so far, in seconds, from /proc/PID/stat.
static double cpu_seconds(pid_t pid) {
    char p[64], line[2048]; snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r"); if (!f || !fgets(line, sizeof line, f)) die("stat"); fclose(f);
    unsigned long utime, stime; char *after = strrchr(line, ')');
    if (!after || sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) die("stat format");
    return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}
// Each process's CPU seconds so far: the client (this process) first, then `kids`.
static void cpu_by_process(pid_t *kids, int n, double *out) {
    out[0] = cpu_seconds(getpid());
    for (int i = 0; i < n; i++) out[i + 1] = cpu_seconds(kids[i]);
}
static int knob(const char *name, int fallback) { const char *v = getenv(name); return v ? atoi(v) : fallback; }
static double bare(double seconds) {
    sqlite3 *db = opendb("bare"); exec(db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v INTEGER)");
    char wal[512]; snprintf(wal, sizeof wal, "%s/bare.db-wal", dir);
    struct stat st; long n = 0;
    while (n < 100000 && (stat(wal, &st) != 0 || st.st_size < 1000 * (4096 + 24))) {
        run(db, "BEGIN IMMEDIATE", 0, 0); run(db, "INSERT INTO t (v) VALUES (?1)", n++, 0); run(db, "COMMIT", 0, 0);
    }
    n = 0; double end = now() + seconds, start = now();
    while (now() < end) { run(db, "BEGIN IMMEDIATE", 0, 0); run(db, "INSERT INTO t (v) VALUES (?1)", n, 0); run(db, "COMMIT", 0, 0); n++; }
    double rate = n / (now() - start);
    memset(cache, 0, sizeof cache);  // its statements die with the connection
    sqlite3_close_v2(db); return rate;
}
static void verification_schema(sqlite3 *db) {
    exec(db, "CREATE TABLE requests (id INTEGER PRIMARY KEY, dest INTEGER, status TEXT, created INTEGER);"
             "CREATE INDEX requests_dest ON requests (dest, status); CREATE INDEX requests_created ON requests (created);"
             "CREATE TABLE deliveries (id INTEGER PRIMARY KEY, request_id INTEGER, state TEXT);"
             "CREATE INDEX deliveries_due ON deliveries (state);"
             "CREATE TABLE events (id INTEGER PRIMARY KEY, request_id INTEGER, kind TEXT); CREATE INDEX events_request ON events (request_id);");
}
static void identity_schema(sqlite3 *db) {
    exec(db, "CREATE TABLE sessions (token INTEGER PRIMARY KEY, user_id INTEGER)");
    for (int i = 0; i < 100; i++) run(db, "INSERT INTO sessions VALUES (?1, ?1)", i, 0);
}
static void schema(void) {
    sqlite3 *db = opendb("identity"); identity_schema(db);
    sqlite3_close(db); db = opendb("verification"); verification_schema(db);
    sqlite3_close(db); db = opendb("accounts"); identity_schema(db); verification_schema(db);
    exec(db, "CREATE TABLE transfers (id INTEGER PRIMARY KEY, user_id INTEGER, key INTEGER, state TEXT, request_id INTEGER, UNIQUE (user_id, key));"
             "CREATE INDEX transfers_request ON transfers (request_id);"
             "CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER);"
             "CREATE TABLE ledger (id INTEGER PRIMARY KEY, transfer_id INTEGER, account_id INTEGER, amount INTEGER, UNIQUE (transfer_id, account_id));"
             "CREATE INDEX ledger_by_account ON ledger (account_id, id);");
    for (int i = 0; i < 200; i++) run(db, "INSERT INTO accounts VALUES (?1, 1000000000)", i, 0);
    sqlite3_close(db);
}
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: floor DIR SECONDS [CONNECTIONS]\n"); return 2; }
    dir = argv[1]; double seconds = atof(argv[2]); int connections = argc > 3 ? atoi(argv[3]) : 8;
    if (connections < 1 || connections > 256) { fprintf(stderr, "CONNECTIONS must be 1-256\n"); return 2; }
    base_port = 30000 + getpid() % 20000;
    // Read before the first fork, so every process sees the same variant.
    group = knob("GROUP", 1);
    no_sync = knob("NOSYNC", 0);
    use_gateway = knob("GATEWAY", 1);
    use_identity = knob("IDENTITY", 1);
    use_verification = knob("VERIFICATION", 1);
    use_attach = knob("ATTACH", 1);
    use_outcome = knob("OUTCOME", 1);
    use_loops = knob("LOOPS", 0);
    reply_via_loop = use_loops && knob("REPLY", 0);
    use_unix = knob("UNIX", 0);
    schema();
    pid_t kids[4];
    int gw = base_port, ac = base_port + 1, id = base_port + 2, vf = base_port + 3;
    if (!(kids[0] = fork())) { serve(id, identity, "identity", 0, 0); }
    if (!(kids[1] = fork())) { open_wal("verification"); pthread_t t; pthread_create(&t, 0, delivery, 0); serve(vf, verification, "verification", 0, 0); }
    if (!(kids[2] = fork())) {
        open_wal("accounts");
        if (!use_verification) { pthread_t t; pthread_create(&t, 0, delivery, 0); }
        serve(ac, accounts, "accounts", id, vf); }
    if (!(kids[3] = fork())) { serve(gw, gateway, 0, ac, 0); }
    double before = bare(seconds);
    pthread_t t[256];
    for (int i = 0; i < connections; i++) pthread_create(&t[i], 0, client, 0);
    usleep(500000); pthread_mutex_lock(&cm); long d0 = done_count; pthread_mutex_unlock(&cm);
    double c0[5], c1[5]; double s0 = now(); cpu_by_process(kids, 4, c0); usleep((useconds_t)(seconds * 1e6));
    pthread_mutex_lock(&cm); long d1 = done_count; pthread_mutex_unlock(&cm); double rate = (d1 - d0) / (now() - s0);
    cpu_by_process(kids, 4, c1);
    double per[5], cpu_per_transfer = 0;
    for (int i = 0; i < 5; i++) { per[i] = (c1[i] - c0[i]) / (d1 - d0); cpu_per_transfer += per[i]; }
    stop = 1; for (int i = 0; i < connections; i++) pthread_join(t[i], 0);
    double after = bare(seconds);
    printf("bare FULL commit %.0f/s (before %.0f, after %.0f); transfer skeleton c=%d %.0f/s: %.2f of commit; CPU %.0f us per transfer\n",
           (before + after) / 2, before, after, connections, rate, rate / ((before + after) / 2), cpu_per_transfer * 1e6);
    // The order of `kids`: identity, verification, accounts, gateway.
    printf("  CPU per transfer: gateway %.0f us, identity %.0f us, verification %.0f us, accounts %.0f us, clients %.0f us\n",
           per[4] * 1e6, per[1] * 1e6, per[2] * 1e6, per[3] * 1e6, per[0] * 1e6);
    for (int i = 0; i < 4; i++) kill(kids[i], SIGKILL);
    while (wait(0) > 0) {}
    return 0;
}
