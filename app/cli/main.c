/* diaseg: the command-line entry point. */
#include "bench.h"
#include "cli.h"

#include <stdio.h>

int main(int argc, char **argv)
{
  app_config cfg;
  int status;

  app_config_init(&cfg);
  status = app_cli_parse(argc, argv, &cfg);
  if (status != DSG_OK) {
    app_cli_say("error", dsg_error_raw());
    return app_exit_code(status);
  }
  if (cfg.version) {
    printf("diaseg %s\n", dsg_version());
    return APP_EXIT_OK;
  }
  if (cfg.help || cfg.command == APP_CMD_NONE) {
    app_cli_usage(cfg.help ? stdout : stderr, cfg.command);
    return cfg.help ? APP_EXIT_OK : APP_EXIT_USAGE;
  }
  app_signals_install();
  if (cfg.command == APP_CMD_DEVICES)
    status = app_devices(&cfg);
  else if (cfg.command == APP_CMD_BENCH)
    status = app_bench(&cfg);
  else
    status = app_run(&cfg);
  if (status != DSG_OK)
    app_cli_say(status == DSG_ERR_NOCONV ? "warning" : "error", dsg_error_raw());
  return app_exit_code(status);
}
