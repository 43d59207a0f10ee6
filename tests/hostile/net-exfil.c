/* SPDX-License-Identifier: MIT */
/*
 * Threat: exfiltration over the network. Tries TCP and UDP to a listener on
 * the host's loopback, raw and packet sockets, netlink changes to the
 * sandbox's own network, an abstract unix socket of the host, and a DNS
 * lookup. Prints one line a try: "NAME blocked (why)" or "NAME ESCAPED".
 * Usage: net-exfil PORT ABSTRACT-NAME (both made by the test on the host).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <linux/if_ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
say(const char *name, int ok, int err)
{
	if (ok)
		printf("%s ESCAPED\n", name);
	else
		printf("%s blocked (%s)\n", name, strerror(err));
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct addrinfo *ai = NULL;
	int fd, r, port;

	if (argc != 3)
		return 2;
	port = atoi(argv[1]);
	in.sin_port = htons((unsigned short)port);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	r = connect(fd, (struct sockaddr *)&in, sizeof in);
	say("tcp-to-host-loopback", r == 0, errno);
	close(fd);

	/* UDP "succeeds" locally whatever happens: the host side counts arrivals. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	sendto(fd, "leak", 4, 0, (struct sockaddr *)&in, sizeof in);
	printf("udp-to-host-loopback sent (the host counts what arrives)\n");
	close(fd);

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	say("raw-socket", fd != -1, errno);
	if (fd != -1)
		close(fd);

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	say("packet-socket", fd != -1, errno);
	if (fd != -1)
		close(fd);

	/* Abstract unix sockets belong to the network namespace. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(un.sun_path + 1, sizeof un.sun_path - 1, "%s", argv[2]);
	r = connect(fd, (struct sockaddr *)&un,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[2])));
	say("abstract-unix-to-host", r == 0, errno);
	close(fd);

	/* No resolver is configured; any query goes to the sandbox's own loopback. */
	r = getaddrinfo("exfil.sbx-test.invalid", "80", NULL, &ai);
	say("dns-lookup", r == 0, r == EAI_SYSTEM ? errno : EHOSTUNREACH);
	if (ai)
		freeaddrinfo(ai);
	return 0;
}
