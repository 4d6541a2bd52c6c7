// What one wake-up costs on this machine: two threads hand a token back and forth through a
// pair of eventfds (each hand-off wakes the other thread, as a loop waking a worker does), and
// the process's CPU time and wall time are divided by the round trips. Run it as it is (the
// kernel places the threads, usually on two vCPUs) and under `taskset -c 0` (both on one):
// on a VM a wake-up that crosses to an idle vCPU costs far more than one that stays.
// Usage: gcc -O2 -o /tmp/wake-cost bench/wake-cost.c -lpthread && /tmp/wake-cost [ROUND_TRIPS]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int to_peer, to_main;
static long round_trips = 200000;

static void pass(int to) { uint64_t one = 1; if (write(to, &one, sizeof one) != sizeof one) abort(); }
static void take(int from) { uint64_t value; if (read(from, &value, sizeof value) != sizeof value) abort(); }
static void *peer(void *unused) {
    (void)unused;
    for (long i = 0; i < round_trips; i++) { take(to_peer); pass(to_main); }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1) round_trips = atol(argv[1]);
    to_peer = eventfd(0, 0); to_main = eventfd(0, 0);
    pthread_t thread; pthread_create(&thread, 0, peer, 0);
    struct timespec start, end; clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < round_trips; i++) { pass(to_peer); take(to_main); }
    clock_gettime(CLOCK_MONOTONIC, &end); pthread_join(thread, 0);
    struct rusage usage; getrusage(RUSAGE_SELF, &usage);
    double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
    double wall = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
    printf("per round trip (two wake-ups): %.2f us wall, %.2f us CPU; %ld voluntary context switches\n",
           wall / round_trips * 1e6, cpu / round_trips * 1e6, usage.ru_nvcsw);
    return 0;
}
