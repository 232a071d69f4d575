/* The floor of an open-model HTTP/1.1 load generator on this machine: one thread,
 * epoll, N keep-alive connections, a request due every 1/rate s, nothing else (no
 * parsing, timing, recording or files). CPU per request = the process's user+system
 * time / responses. Mode "ms" sleeps until the next due time rounded up to whole
 * milliseconds (as Go's netpoller does, so due requests leave in batches); "exact"
 * sleeps to the nanosecond (epoll_pwait2), one wake-up per request.
 *
 *   floor PORT RATE SECONDS ms|exact [CONNS]     (127.0.0.1 only)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXCONNS 256

static long long now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: floor PORT RATE SECONDS ms|exact [CONNS]\n");
		return 2;
	}
	int port = atoi(argv[1]), rate = atoi(argv[2]), secs = atoi(argv[3]);
	int ms = strcmp(argv[4], "ms") == 0;
	int n = argc > 5 ? atoi(argv[5]) : 10;
	if (port <= 0 || rate <= 0 || secs <= 0 || n <= 0 || n > MAXCONNS) {
		fprintf(stderr, "floor: bad arguments\n");
		return 2;
	}
	int fd[MAXCONNS], busy[MAXCONNS] = {0};
	int ep = epoll_create1(0);
	const char *req = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: floor\r\n\r\n";
	size_t rl = strlen(req);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	for (int i = 0; i < n; i++) {
		int one = 1;
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&a, sizeof a) != 0) {
			perror("floor: connect");
			return 1;
		}
		setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fcntl(fd[i], F_SETFL, O_NONBLOCK);
		struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.u32 = i};
		epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e);
	}
	long long period = 1000000000LL / rate, next = now(), end = next + secs * 1000000000LL;
	long sent = 0, done = 0, dropped = 0, wakes = 0;
	char buf[4096];
	struct epoll_event ev[MAXCONNS];
	for (;;) {
		long long t = now();
		if (t >= end)
			break;
		for (; next <= t; next += period) {
			int k = -1;
			for (int i = 0; i < n && k < 0; i++)
				if (!busy[i])
					k = i;
			if (k < 0) {
				dropped++;
				continue;
			}
			if (write(fd[k], req, rl) != (ssize_t)rl) {
				perror("floor: write");
				return 1;
			}
			busy[k] = 1;
			sent++;
		}
		long long d = next - t;
		if (ms)
			d = (d + 999999) / 1000000 * 1000000;
		struct timespec ts = {d / 1000000000LL, d % 1000000000LL};
		int m = syscall(SYS_epoll_pwait2, ep, ev, MAXCONNS, &ts, NULL, 0);
		wakes++;
		for (int j = 0; j < m; j++) {
			int i = ev[j].data.u32;
			for (;;) {
				ssize_t r = read(fd[i], buf, sizeof buf);
				if (r <= 0)
					break;
				/* nginx's `return 200 'ok'`: the response ends with the body "ok". */
				if (r >= 2 && buf[r - 2] == 'o' && buf[r - 1] == 'k') {
					busy[i] = 0;
					done++;
				}
			}
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double u = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec;
	double s = ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
	if (done == 0) {
		fprintf(stderr, "floor: no responses\n");
		return 1;
	}
	printf("{\"tool\": \"c-floor-%s\", \"requests\": %ld, \"dropped\": %ld, \"user_us\": %.2f, "
	       "\"sys_us\": %.2f, \"cpu_us\": %.2f, \"wakeups\": %.3f, \"vcsw\": %.3f}\n",
	       ms ? "ms" : "exact", done, dropped, u / done, s / done, (u + s) / done,
	       (double)wakes / done, (double)ru.ru_nvcsw / done);
	return 0;
}
