// SPDX-License-Identifier: GPL-2.0
/* mroce: the companion CLI of the mroce RDMA driver. See mroce(8). */
#include <csignal>
#include <cstring>
#include <iostream>
#include <unistd.h>

#include "cli.h"

namespace {
volatile sig_atomic_t stop_flag;

void on_signal(int)
{
	stop_flag = 1;
}
} // namespace

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* no SA_RESTART: a blocking poll/accept returns and sees the flag */
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	signal(SIGPIPE, SIG_IGN);

	mroce::Context ctx(std::cout, std::cerr);
	ctx.stop = &stop_flag;
	ctx.tty = isatty(STDOUT_FILENO);
	std::vector<std::string> args(argv + 1, argv + argc);
	int rc = mroce::run(args, ctx);
	std::cout.flush();
	return rc;
}
