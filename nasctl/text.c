/*
 * What a daemon says is printed so that it cannot drive the terminal: a
 * disk's model, a volume name, an error message or an event come from
 * a disk or a daemon, not from the user. C0 and C1 controls, DEL, bidi
 * overrides and bytes that are not UTF-8 are shown as escapes; other
 * non-ASCII characters only when the locale says the terminal is UTF-8
 * (in an 8-bit charset the byte 0x9b of "Û" is CSI).
 */
#include <langinfo.h>
#include <locale.h>
#include <string.h>

#include "nasctl.h"

int text_utf8;

void
text_init_locale(void)
{
	setlocale(LC_CTYPE, "");
	text_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

/*
 * The code point of the UTF-8 sequence at s (n bytes left), its length
 * in *len; -1 when it is not well-formed (overlong, surrogate, beyond
 * U+10FFFF, cut short).
 */
static long
utf8_decode(const unsigned char *s, size_t n, size_t *len)
{
	static const long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	long cp;
	size_t k;

	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4;
	else
		return -1;
	if (n < k)
		return -1;
	cp = s[0] & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*len = k;
	return cp;
}

/* Characters that move the cursor, switch modes or reorder text. */
static int
is_control(long cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0x2028 || cp == 0x2029;
}

/* One character as the escape text shows it. */
static void
escape_one(long cp, const unsigned char *raw, char *esc, size_t len)
{
	switch (cp) {
	case '\n':
		snprintf(esc, len, "\\n");
		return;
	case '\r':
		snprintf(esc, len, "\\r");
		return;
	case '\t':
		snprintf(esc, len, "\\t");
		return;
	case '\\':
		snprintf(esc, len, "\\\\");
		return;
	}
	if (cp < 0 || cp < 0x80)
		snprintf(esc, len, "\\x%02x", raw[0]);
	else
		snprintf(esc, len, "\\u%04lx", cp);
}

size_t
text_escape(const char *in, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), used = 0, k, w;
	char esc[24];
	long cp;

	if (len == 0)
		return 0;
	while (n > 0) {
		cp = utf8_decode(s, n, &k);
		if (cp < 0)
			k = 1;
		if (cp < 0 || is_control(cp) || cp == '\\' || (cp >= 0x80 && !text_utf8)) {
			escape_one(cp, s, esc, sizeof(esc));
			w = strlen(esc);
		} else {
			memcpy(esc, s, k);
			w = k;
		}
		/* A character that does not fit whole is left out. */
		if (used + w >= len)
			break;
		memcpy(buf + used, esc, w);
		used += w;
		s += k;
		n -= k;
	}
	buf[used] = '\0';
	return text_width(buf);
}

size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void
text_print(FILE *f, const char *s)
{
	char buf[TEXT_MAX];

	text_escape(s, buf, sizeof(buf));
	fputs(buf, f);
}

/* A \u escape, as a surrogate pair above U+FFFF. */
static void
json_u(FILE *f, long cp)
{
	if (cp < 0x10000) {
		fprintf(f, "\\u%04lx", cp);
		return;
	}
	cp -= 0x10000;
	fprintf(f, "\\u%04lx\\u%04lx", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
}

/*
 * json-c escapes '"', '\\' and what is below 0x20 and passes every
 * other byte on. Anything from 0x7f up only occurs inside strings in
 * its output, so the whole text can be walked: controls become \u
 * escapes, bytes that are not UTF-8 U+FFFD (JSON cannot carry them).
 */
void
json_safe_print(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), k;
	long cp;

	while (n > 0) {
		cp = utf8_decode(s, n, &k);
		if (cp < 0) {
			fputs("\\ufffd", f);
			k = 1;
		} else if (cp >= 0x7f && (is_control(cp) || !text_utf8))
			json_u(f, cp);
		else
			fwrite(s, 1, k, f);
		s += k;
		n -= k;
	}
}
