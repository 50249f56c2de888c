/*
 * nasctl's readers of untrusted bytes: what a daemon says, escaped for
 * the terminal (text_escape, json_safe_print), and params text checked
 * and compacted (params_check). Aborts when an escape lets a control
 * byte or malformed UTF-8 through, when a width is wrong, when --json
 * output is no longer JSON, or when params_check accepts what json-c
 * refuses or leaves a newline in the line it sends.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nasctl/nasctl.h"

/* Well-formed UTF-8 without C0 (but '\n' when nl), DEL or C1 controls. */
static int
terminal_safe(const unsigned char *s, size_t n, int nl, int ascii)
{
	for (size_t i = 0; i < n; i++) {
		if ((s[i] < 0x20 && !(nl && s[i] == '\n')) || s[i] == 0x7f)
			return 0;
		if (s[i] >= 0x80 && ascii)
			return 0;
		if (s[i] == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
			return 0;
	}
	return 1;
}

static void
check_escape(const char *s)
{
	char buf[TEXT_MAX];
	size_t w;

	w = text_escape(s, buf, sizeof(buf));
	if (w != text_width(buf) ||
	    !terminal_safe((const unsigned char *)buf, strlen(buf), 0, !text_utf8))
		abort();
}

static void
check_json(const char *s, size_t n)
{
	struct json_object *o = json_object_new_string_len(s, (int)n), *back;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	json_safe_print(f, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fclose(f);
	if (!terminal_safe((unsigned char *)out, len, 0, !text_utf8) ||
	    (back = json_tokener_parse(out)) == NULL ||
	    !json_object_is_type(back, json_type_string))
		abort();
	json_object_put(back);
	json_object_put(o);
	free(out);
}

static void
check_params(const char *s, size_t n)
{
	static const char *const reserved[] = { "passphrase", NULL };
	struct locked b = { 0 };
	struct json_object *o;
	char why[256];

	if (locked_add(&b, s, n) == -1)
		abort();
	if (params_check(&b, reserved, why, sizeof(why)) == 0) {
		if (memchr(b.p, '\n', b.len) || strlen(b.p) != b.len ||
		    (o = json_tokener_parse(b.p)) == NULL ||
		    !json_object_is_type(o, json_type_object) ||
		    json_object_object_get_ex(o, "passphrase", NULL))
			abort();
		json_object_put(o);
	}
	locked_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 65536 || (s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (text_utf8 = 0; text_utf8 <= 1; text_utf8++) {
		check_escape(s);
		check_json(s, size);
	}
	check_params(s, size);
	free(s);
	return 0;
}
