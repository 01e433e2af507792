/*
 * cli/cmd_policies.c — `gmsim policies [--json]`: every registered policy
 * (gm_policy_count/gm_policy_at, in registry order) with its parameters:
 * name, type, default, help and, for enumerations, the choices.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

static const char policies_usage[] =
    "usage: gmsim policies [--json]\n"
    "\n"
    "List the allocator policies gmsim simulates and their parameters, which\n"
    "'gmsim replay' sets with --param POLICY.KEY=VALUE.\n"
    "\n"
    "options:\n"
    "      --json          print JSON instead of text (docs/formats.md)\n"
    "  -h, --help          show this help\n";

static const char *policies_type(gm_param_type_t type)
{
    switch (type) {
    case GM_PARAM_SIZE: return "size";
    case GM_PARAM_INT: return "int";
    case GM_PARAM_DOUBLE: return "double";
    case GM_PARAM_BOOL: return "bool";
    case GM_PARAM_ENUM: return "enum";
    case GM_PARAM_STRING: return "string";
    }
    return "?";
}

static void policies_text(void)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        if (i)
            putchar('\n');
        printf("%s: %s\n", ops->name, ops->help ? ops->help : "");
        if (ops->nparams == 0) {
            printf("  (no parameters)\n");
            continue;
        }
        gm__cli_table_t t;
        gm__cli_table_head(&t, "llll", "parameter", "type", "default", "help", NULL);
        for (size_t k = 0; k < ops->nparams; k++) {
            const gm_param_spec_t *p = &ops->params[k];
            gm__cli_table_cell(&t, "%s", p->name);
            if (p->type == GM_PARAM_ENUM && p->choices)
                gm__cli_table_cell(&t, "%s", p->choices);
            else
                gm__cli_table_cell(&t, "%s", policies_type(p->type));
            gm__cli_table_cell(&t, "%s", p->def && p->def[0] ? p->def : "''");
            gm__cli_table_cell(&t, "%s", p->help ? p->help : "");
        }
        gm__cli_table_print(&t, stdout, "  ");
        gm__cli_table_release(&t);
    }
}

static void policies_json(void)
{
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    gm_json_begin_object(&j);
    gm_json_key(&j, "policies");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "name", ops->name);
        gm_json_kv_str(&j, "help", ops->help);
        gm_json_key(&j, "params");
        gm_json_begin_array(&j);
        for (size_t k = 0; k < ops->nparams; k++) {
            const gm_param_spec_t *p = &ops->params[k];
            gm_json_begin_object(&j);
            gm_json_kv_str(&j, "name", p->name);
            gm_json_kv_str(&j, "type", policies_type(p->type));
            gm_json_kv_str(&j, "default", p->def);
            gm_json_kv_str(&j, "help", p->help);
            if (p->type == GM_PARAM_ENUM) {
                gm_json_key(&j, "choices");
                gm_json_begin_array(&j);
                const char *c = p->choices ? p->choices : "";
                while (*c) {
                    size_t n = strcspn(c, "|");
                    char name[128];
                    snprintf(name, sizeof name, "%.*s", (int)(n < 127 ? n : 127), c);
                    gm_json_str(&j, name);
                    c += n + (c[n] == '|');
                }
                gm_json_end_array(&j);
            }
            gm_json_end_object(&j);
        }
        gm_json_end_array(&j);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

int gm__cmd_policies(int argc, char **argv)
{
    int json, status;
    if (gm__cli_json_only(argc, argv, policies_usage, &json, NULL, &status))
        return status;
    if (json)
        policies_json();
    else
        policies_text();
    return GM_CLI_OK;
}
