/* parse.c: a half-edited file, as an editor saves it mid-change. */
#include <stdio.h>
#include <string.h>

struct token {
	int kind;
	const char *text;
};

/* Return the next token, or NULL at the end. */
static struct token *next_token(const char **p)
{
	static struct token t;

	while (**p == ' ')
		(*p)++;
	if (!**p)
		return NULL;
	t.text = *p;
	t.kind = **p == '(' ? 1 : 2;
	(*p)++;
	return &t;
}

int parse(const char *s)
{
	struct token *t;
	int depth = 0;

	while ((t = next_token(&s)) {
		if (t->kind == 1
			depth++;
		else if (depth > 0)
			depth--;
	}
	return depth == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	return argc > 1 && parse(argv[1]) == 0 ? 0 : 1;
}
