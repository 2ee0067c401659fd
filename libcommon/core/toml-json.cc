/*
 * toml-json.cc: a TOML file as JSON text, through toml++'s parser and its JSON
 * formatter.  No exception leaves this unit: C calls it.
 */
#include "core/toml-json.h"

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <toml++/toml.h>

static char *dup_string(const std::string &s)
{
	char *p = static_cast<char *>(std::malloc(s.size() + 1));

	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

static char *table_json(bool file, const char *text, size_t len, const char *path, char **err)
{
	*err = nullptr;
	try {
		toml::table t = file ? toml::parse_file(path)
				     : toml::parse(std::string_view(text, len), std::string_view(path));
		std::ostringstream out;
		out << toml::json_formatter{ t };
		return dup_string(out.str());
	} catch (const toml::parse_error &e) {
		std::ostringstream msg;
		msg << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
		*err = dup_string(msg.str());
	} catch (const std::exception &e) {
		*err = dup_string(e.what());
	}
	return nullptr;
}

char *toml_file_json(const char *path, char **err)
{
	return table_json(true, nullptr, 0, path, err);
}

char *toml_text_json(const char *text, size_t len, const char *path, char **err)
{
	return table_json(false, text, len, path, err);
}
