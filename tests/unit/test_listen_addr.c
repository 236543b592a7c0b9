/*
 * Unit tests of the one listen address parser: forms, ports by the
 * caller's lowest port, and the error sentences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "listen_addr.h"

static void ipv4_and_ipv6(void **state)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char err[160];
	char text[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(listen_addr_parse("127.0.0.1:9796", 1, &sa, &len, err, sizeof(err)), 0);
	assert_int_equal(sa.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(((struct sockaddr_in *)&sa)->sin_port), 9796);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.1");

	assert_int_equal(listen_addr_parse("[2001:db8::1]:65535", 1, &sa, &len, err, sizeof(err)), 0);
	assert_int_equal(sa.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&sa)->sin6_port), 65535);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, text, sizeof(text));
	assert_string_equal(text, "2001:db8::1");

	/* Checking only. */
	assert_int_equal(listen_addr_parse("[::]:1", 1, NULL, NULL, err, sizeof(err)), 0);
}

static void port_zero_is_the_callers_choice(void **state)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char err[160];

	(void)state;
	assert_int_equal(listen_addr_parse("127.0.0.1:0", 0, &sa, &len, err, sizeof(err)), 0);
	assert_int_equal(ntohs(((struct sockaddr_in *)&sa)->sin_port), 0);
	assert_int_equal(listen_addr_parse("127.0.0.1:0", 1, &sa, &len, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "expected a port from 1 to 65535, got '0'");
	assert_int_equal(listen_addr_parse("127.0.0.1:65536", 0, &sa, &len, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "expected a port from 0 to 65535, got '65536'");
}

static void errors_say_what_and_what_is_expected(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{ "10.1.2.3", "expected A.B.C.D:PORT or [IPV6]:PORT, got '10.1.2.3'" },
		{ "[::1]9796", "expected A.B.C.D:PORT or [IPV6]:PORT, got '[::1]9796'" },
		{ "::1:9796", "an IPv6 address goes in brackets, as in '[::1]:9796', got '::1:9796'" },
		{ "localhost:9796",
		  "'localhost' is not an IPv4 address (expected A.B.C.D:PORT or [IPV6]:PORT)" },
		{ "[::g]:9796", "'::g' is not an IPv6 address (expected A.B.C.D:PORT or [IPV6]:PORT)" },
		{ "1.2.3.4:", "expected a port from 1 to 65535, got ''" },
		{ "1.2.3.4:+80", "expected a port from 1 to 65535, got '+80'" },
		{ "1.2.3.4:80x", "expected a port from 1 to 65535, got '80x'" },
	};
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(listen_addr_parse(cases[i].text, 1, NULL, NULL, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, cases[i].err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipv4_and_ipv6),
		cmocka_unit_test(port_zero_is_the_callers_choice),
		cmocka_unit_test(errors_say_what_and_what_is_expected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
