/* Helpers shared by the unit suites; see unit-util.h. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit-util.h"

char *
unit_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (base == NULL || *base == '\0')
		base = "/tmp";
	ck_assert_int_ne(asprintf(&dir, "%s/nas-unit.XXXXXX", base), -1);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
unit_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *
unit_write(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f;

	ck_assert_int_ne(asprintf(&path, "%s/%s", dir, name), -1);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

struct json_object *
unit_json(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	ck_assert_msg(o != NULL, "not JSON: %s", text);
	return o;
}

int
unit_err_code(struct json_object *answer)
{
	struct json_object *e, *c;

	if (!json_object_object_get_ex(answer, "error", &e))
		return 0;
	ck_assert(json_object_object_get_ex(e, "code", &c));
	return json_object_get_int(c);
}

const char *
unit_err_msg(struct json_object *answer)
{
	struct json_object *e, *m;

	if (!json_object_object_get_ex(answer, "error", &e) ||
	    !json_object_object_get_ex(e, "message", &m))
		return "";
	return json_object_get_string(m);
}

int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
