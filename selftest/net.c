/*
 * The network tests (net-1, lacp-4): iperf3 clients through libiperf
 * against the peers' iperf3 servers, one child process per flow (libiperf
 * keeps its error in a global and its clients are not meant to share a
 * process). Each child sends back what iperf3 itself counted as received,
 * so nas-selftest and iperf3 report the same bytes for the same link.
 */
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdint.h>	/* iperf_api.h uses it without including it */
#include <sys/select.h>
#include <iperf_api.h>
#include <json-c/json.h>

#include "log.h"
#include "selftest.h"

#define NET_MAX_FLOWS	4

/* In the child: one iperf3 client; writes "BYTES SECONDS" (what the
 * receiving end counted) or "error TEXT" to fd. */
static void __attribute__((noreturn))
flow_child(const char *peer, int reverse, int seconds, int fd)
{
	struct iperf_test *t;
	struct json_object *j = NULL, *sum, *e;
	char out[160];
	const char *js;
	int n, tries = 0;

again:
	t = iperf_new_test();
	if (t == NULL || iperf_defaults(t) < 0)
		_exit(1);
	/* libiperf prints its JSON on stdout too; the parent's is not ours */
	if ((n = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		dup2(n, STDOUT_FILENO);
		close(n);
	}
	iperf_set_test_role(t, 'c');
	iperf_set_test_server_hostname(t, peer);
	iperf_set_test_duration(t, seconds);
	iperf_set_test_reverse(t, reverse);
	iperf_set_test_num_streams(t, 1);
	iperf_set_test_json_output(t, 1);
	/* a peer that is not there fails in seconds, not TCP's two minutes */
	iperf_set_test_connect_timeout(t, 5000);
	if (iperf_run_client(t) < 0 && ++tries < 4) {
		/* "the server is busy" comes back as an error too: retried */
		iperf_free_test(t);
		sleep(1);
		goto again;
	} else if (tries >= 4)
		n = snprintf(out, sizeof(out), "error %s: %s\n", peer, iperf_strerror(i_errno));
	else if ((js = iperf_get_test_json_output_string(t)) == NULL ||
	    (j = json_tokener_parse(js)) == NULL ||
	    !json_object_object_get_ex(j, "end", &sum) ||
	    !json_object_object_get_ex(sum, "sum_received", &sum)) {
		/* iperf3 -s serves one test at a time and takes a moment to
		 * be ready for the next: "the server is busy" is retried */
		if (j && json_object_object_get_ex(j, "error", &e) && ++tries < 4) {
			json_object_put(j);
			j = NULL;
			iperf_free_test(t);
			sleep(1);
			goto again;
		}
		n = snprintf(out, sizeof(out), "error %s: %s\n", peer,
		    j && json_object_object_get_ex(j, "error", &e) ?
		    json_object_get_string(e) : "no result from iperf3");
	} else {
		struct json_object *b = NULL, *s = NULL;

		json_object_object_get_ex(sum, "bytes", &b);
		json_object_object_get_ex(sum, "seconds", &s);
		n = snprintf(out, sizeof(out), "%lld %.6f\n", (long long)json_object_get_int64(b),
		    json_object_get_double(s));
	}
	if (n > 0 && (size_t)n < sizeof(out) && write(fd, out, (size_t)n) != n)
		_exit(1);
	_exit(0);
}

/* Runs the flows at once, one per peer (cycling), and adds up what was
 * received: bytes, and the longest receiving time. */
int
st_net_flows(char peers[][64], int npeers, int flows, int reverse, int seconds,
    uint64_t *bytes, double *secs, char *err, size_t errlen)
{
	pid_t pid[NET_MAX_FLOWS];
	FILE *in[NET_MAX_FLOWS];
	int rc = 0;

	*bytes = 0;
	*secs = 0;
	if (flows < 1 || flows > NET_MAX_FLOWS || npeers < 1)
		return -1;
	for (int i = 0; i < flows; i++) {
		int fd[2];

		in[i] = NULL;
		pid[i] = -1;
		if (pipe2(fd, O_CLOEXEC) == -1)
			continue;
		fflush(NULL);
		if ((pid[i] = fork()) == 0) {
			close(fd[0]);
			flow_child(peers[i % npeers], reverse, seconds, fd[1]);
		}
		close(fd[1]);
		if (pid[i] == -1 || (in[i] = fdopen(fd[0], "r")) == NULL)
			close(fd[0]);
	}
	for (int i = 0; i < flows; i++) {
		char line[160];
		long long b;
		double s;
		int st;

		line[0] = '\0';
		if (in[i] == NULL || fgets(line, sizeof(line), in[i]) == NULL)
			snprintf(line, sizeof(line), "error %s: the flow did not report\n",
			    peers[i % npeers]);
		if (in[i])
			fclose(in[i]);
		if (pid[i] > 0)
			waitpid(pid[i], &st, 0);
		if (rc == 0 && sscanf(line, "%lld %lf", &b, &s) == 2 && b >= 0 && s > 0) {
			*bytes += (uint64_t)b;
			if (s > *secs)
				*secs = s;
			continue;
		}
		if (rc == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(err, errlen, "%s", strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		}
		rc = -1;
	}
	return rc;
}

static unsigned long long
counter(const char *port, const char *which)
{
	char path[320];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", port, which);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The bytes each port of every bond has sent and received so far, from
 * the kernel's counters (the same ones netd's bond.show reports). */
int
st_net_ports(struct st_port_bytes *p, int max)
{
	glob_t g;
	int n = 0;

	if (glob("/sys/class/net/*/bonding/slaves", 0, NULL, &g) != 0)
		return 0;
	for (size_t k = 0; k < g.gl_pathc && n < max; k++) {
		char names[512], *save = NULL;
		FILE *f = fopen(g.gl_pathv[k], "r");

		if (f == NULL)
			continue;
		if (fgets(names, sizeof(names), f) == NULL)
			names[0] = '\0';
		fclose(f);
		for (char *s = strtok_r(names, " \n", &save); s && n < max;
		    s = strtok_r(NULL, " \n", &save)) {
			if (strlen(s) >= sizeof(p[n].name) || strchr(s, '/'))
				continue;
			snprintf(p[n].name, sizeof(p[n].name), "%s", s);
			p[n].tx = counter(s, "tx_bytes");
			p[n].rx = counter(s, "rx_bytes");
			n++;
		}
	}
	globfree(&g);
	return n;
}
