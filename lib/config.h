/* config.c: INI configuration through iniparser, checked against a schema. */
#ifndef NAS_CONFIG_H
#define NAS_CONFIG_H

#include <stdio.h>

enum conf_type { CONF_INT, CONF_BOOL, CONF_STRING, CONF_ENUM };

/* One key a daemon understands; a table ends with .section == NULL. */
struct conf_key {
	const char		*section;
	const char		*key;
	enum conf_type		 type;
	const char		*def;		/* default, as written in a file */
	long long		 min, max;	/* CONF_INT range; CONF_STRING length */
	const char *const	*choices;	/* CONF_ENUM, NULL-terminated */
	const char		*help;
};

struct conf;

/*
 * Loads path (a missing file gives the defaults only when may_be_missing)
 * and checks every key against the schemas (NULL-terminated list of
 * tables). On error returns NULL and writes "file: [section] key: why"
 * into err.
 */
struct conf *conf_load(const char *path, const struct conf_key *const *schemas,
	    int may_be_missing, char *err, size_t errlen);
void	 conf_free(struct conf *);
/*
 * The same checks (syntax, repeated keys and sections) for a file with
 * no fixed schema (netd.ini): iniparser's dictionary, or NULL with err
 * (*missing 1: the file is absent and may_be_missing said that is fine).
 */
/*
 * Sections (lower case) for which is_foreign returns 1 are not checked
 * against the schemas: the daemon reads and checks them itself (netd's
 * [port NAME], [bond NAME] ...). Set before the first conf_load.
 */
void	 conf_set_foreign(int (*is_foreign)(const char *section));
struct _dictionary_ *conf_load_ini(const char *path, int may_be_missing, int *missing,
	    char *err, size_t errlen);
long long conf_int(const struct conf *, const char *section, const char *key);
int	 conf_bool(const struct conf *, const char *section, const char *key);
const char *conf_str(const struct conf *, const char *section, const char *key);
const char *conf_path(const struct conf *);
/* Writes the effective configuration, every key, in INI form. */
void	 conf_print(const struct conf *, FILE *);

#endif
