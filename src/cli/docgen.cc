#include "cli/docgen.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>

namespace gpufleet::cli {
namespace {

// "TEXT:{text,json}" -> {"text", "json"}: CLI11 writes an IsMember set into the type name.
std::vector<std::string> ChoicesOf(const std::string& type_name) {
  const size_t open = type_name.find(":{");
  if (open == std::string::npos) return {};
  const size_t close = type_name.find('}', open);
  if (close == std::string::npos) return {};
  std::vector<std::string> out;
  std::string item;
  for (size_t i = open + 2; i <= close; ++i) {
    if (type_name[i] == ',' || i == close) {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += type_name[i];
    }
  }
  return out;
}

CliOption DescribeOption(CLI::Option* opt) {
  CliOption o;
  for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
  for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
  if (opt->get_positional()) o.positional = opt->get_name(true, false);
  const std::string type = opt->get_type_name();
  if (opt->get_expected_max() != 0) {
    o.value = type.substr(0, type.find(':'));
    if (o.value.empty()) o.value = "VALUE";
    o.choices = ChoicesOf(type);
  }
  o.help = opt->get_description();
  o.default_value = opt->get_default_str();
  o.required = opt->get_required();
  o.repeated = opt->get_items_expected_max() > 1;
  return o;
}

CliCommand Describe(CLI::App* app, const std::string& path) {
  CliCommand c;
  c.path = path;
  c.help = app->get_description();
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_group().empty()) continue;  // test-only
    c.options.push_back(DescribeOption(opt));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    c.subcommands.push_back(
        Describe(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name()));
  }
  return c;
}

void Walk(const CliCommand& c, const std::function<void(const CliCommand&)>& f) {
  f(c);
  for (const auto& s : c.subcommands) Walk(s, f);
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

// A word inside a bash double-quoted string or case pattern: our names are [A-Za-z0-9._-].
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\' || ch == '$' || ch == '`') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// Lines of a roff body: escapes backslashes and protects a leading '.' or '\''.
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
    line_start = ch == '\n';
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string RoffHelp(const std::string& help) {
  // A help text's first line is prose; lines after it are a preformatted list (emit's targets).
  const size_t nl = help.find('\n');
  if (nl == std::string::npos) return Roff(help) + "\n";
  return Roff(help.substr(0, nl)) + "\n.RS\n.nf\n" + Roff(help.substr(nl + 1)) + "\n.fi\n.RE\n";
}

std::string OptionTerm(const CliOption& o) {
  std::vector<std::string> parts;
  for (const auto& n : o.names) parts.push_back("\\fB" + Roff(n) + "\\fR");
  std::string term = Join(parts, ", ");
  if (!o.value.empty() && !o.names.empty()) {
    const std::string v = o.choices.empty() ? o.value : Join(o.choices, "|");
    term += " \\fI" + Roff(v) + "\\fR";
  }
  if (o.names.empty()) term = "\\fI" + Roff(o.positional) + "\\fR";
  return term;
}

std::string OptionsRoff(const CliCommand& c) {
  std::string out;
  for (const auto& o : c.options) {
    out += ".TP\n" + OptionTerm(o) + "\n" + RoffHelp(o.help);
    if (!o.names.empty() && !o.positional.empty()) {
      out += "Also given as the argument " + Roff(o.positional) + ".\n";
    }
    if (!o.default_value.empty()) {
      out += (o.help.empty() || o.help.back() == '.' ? "" : ".\n") + std::string("Default: ") +
             Roff(o.default_value) + ".\n";
    }
    if (o.required) out += "Required.\n";
  }
  return out;
}

std::string SynopsisRoff(const CliCommand& c, const std::string& program) {
  std::string out = ".B " + Roff(program + (c.path.empty() ? "" : " " + c.path)) + "\n";
  if (!c.subcommands.empty()) out += ".I command\n";
  bool flags = false;
  for (const auto& o : c.options) {
    if (!o.names.empty() && o.positional.empty()) flags = true;
  }
  if (flags) out += ".RI [ options ]\n";
  for (const auto& o : c.options) {
    if (o.positional.empty()) continue;
    const std::string arg = Roff(o.positional) + (o.repeated ? "..." : "");
    out += o.required ? ".I " + arg + "\n" : ".RI [ " + arg + " ]\n";
  }
  return out;
}

std::string Upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

const char kExitStatus[] =
    ".SH EXIT STATUS\n"
    ".TP\n0\nSuccess: every check passed.\n"
    ".TP\n1\nA check or threshold failed (the output says which).\n"
    ".TP\n2\nBad usage or input: a flag, a spec, a file.\n"
    ".TP\n3\nThe environment lacks something: a library, a device, a service, a peer.\n";

}  // namespace

CliCommand DescribeCli(CLI::App* app) { return Describe(app, ""); }

std::string BashCompletion(const CliCommand& root, const std::string& program) {
  std::string fn = "_" + program;
  std::replace(fn.begin(), fn.end(), '-', '_');
  std::string cmds, flags, values, args;
  Walk(root, [&](const CliCommand& c) {
    const std::string key = Quote(c.path);
    std::vector<std::string> subs, names, positional_choices;
    for (const auto& s : c.subcommands) subs.push_back(s.path.substr(s.path.rfind(' ') + 1));
    for (const auto& o : c.options) {
      names.insert(names.end(), o.names.begin(), o.names.end());
      if (!o.positional.empty()) {
        positional_choices.insert(positional_choices.end(), o.choices.begin(), o.choices.end());
      }
      if (o.value.empty() || o.names.empty()) continue;
      std::vector<std::string> keys;
      for (const auto& n : o.names) keys.push_back(Quote(c.path + " " + n));
      values +=
          fmt::format("    {}) REPLY={} ;;\n", Join(keys, " | "), Quote(Join(o.choices, " ")));
    }
    if (!subs.empty()) cmds += fmt::format("    {}) REPLY={} ;;\n", key, Quote(Join(subs, " ")));
    if (!names.empty()) flags += fmt::format("    {}) REPLY={} ;;\n", key, Quote(Join(names, " ")));
    if (!positional_choices.empty()) {
      args += fmt::format("    {}) REPLY={} ;;\n", key, Quote(Join(positional_choices, " ")));
    }
  });
  return fmt::format(
      R"(# bash completion for {p}: generated by `{p} completion bash` from the definitions
# that parse its command line, so it lists exactly the commands, flags and values {p} accepts.

# The subcommands of command path $1 (in REPLY).
{f}_cmds() {{
  case $1 in
{cmds}    *) REPLY="" ;;
  esac
}}

# The flags of command path $1.
{f}_flags() {{
  case $1 in
{flags}    *) REPLY="" ;;
  esac
}}

# Whether flag $2 of command path $1 takes a value (status 0), and its allowed values (REPLY;
# empty: any value, completed as a file name).
{f}_value() {{
  case "$1 $2" in
{values}    *) return 1 ;;
  esac
}}

# The fixed values of command path $1's positional argument, if it has some.
{f}_args() {{
  case $1 in
{args}    *) return 1 ;;
  esac
}}

{f}() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} path="" i w flag REPLY
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    if [[ $w == -* ]]; then
      # --flag=value arrives as three words: --flag, =, value.
      if [[ ${{COMP_WORDS[i + 1]}} == "=" ]]; then
        ((i += 2))
      elif {f}_value "$path" "$w"; then
        ((i++))
      fi
      continue
    fi
    {f}_cmds "$path"
    [[ " $REPLY " == *" $w "* ]] && path=${{path:+$path }}$w
  done
  flag=""
  if ((COMP_CWORD >= 2)) && [[ ${{COMP_WORDS[COMP_CWORD - 1]}} == "=" ]]; then
    flag=${{COMP_WORDS[COMP_CWORD - 2]}}
  elif [[ $cur == "=" ]]; then
    flag=${{COMP_WORDS[COMP_CWORD - 1]}}
    cur=""
  elif ((COMP_CWORD >= 1)); then
    flag=${{COMP_WORDS[COMP_CWORD - 1]}}
  fi
  if [[ $flag == -* ]] && {f}_value "$path" "$flag"; then
    [[ -n $REPLY ]] && mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
    return 0
  fi
  if [[ $cur == -* ]]; then
    {f}_flags "$path"
    mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
    return 0
  fi
  {f}_cmds "$path"
  local words=$REPLY
  {f}_args "$path" && words+=" $REPLY"
  [[ -n ${{words// /}} ]] && mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  return 0
}}

complete -o default -F {f} {p}
)",
      fmt::arg("p", program), fmt::arg("f", fn), fmt::arg("cmds", cmds), fmt::arg("flags", flags),
      fmt::arg("values", values), fmt::arg("args", args));
}

std::string ZshCompletion(const CliCommand& root, const std::string& program) {
  return fmt::format(
      "#compdef {p}\n"
      "# zsh completion for {p}: generated by `{p} completion zsh`; zsh runs the bash completion\n"
      "# (the same generated tables) through its bashcompinit layer.\n"
      "autoload -U +X bashcompinit && bashcompinit\n\n{bash}",
      fmt::arg("p", program), fmt::arg("bash", BashCompletion(root, program)));
}

std::vector<std::pair<std::string, std::string>> ManPages(const CliCommand& root,
                                                          const std::string& program,
                                                          const std::string& version,
                                                          const std::string& date) {
  std::vector<std::pair<std::string, std::string>> pages;
  const auto header = [&](const std::string& name) {
    return fmt::format(".TH {} 1 {} \"{} {}\" \"{} manual\"\n", Roff(Upper(name)), date, program,
                       version, program);
  };
  // gpufleet(1): the commands and the global flags.
  std::string top = header(program);
  top += ".SH NAME\n" + Roff(program) + " \\- " + Roff(root.help.substr(root.help.find(':') + 1)) +
         "\n";
  top += ".SH SYNOPSIS\n" + SynopsisRoff(root, program);
  top += ".SH DESCRIPTION\n" + Roff(root.help) +
         "\n.PP\nEvery command reads the same cluster spec (YAML); without one, the embedded "
         "reference cluster. Each command has its own page, named below.\n";
  top += ".SH COMMANDS\n";
  for (const auto& s : root.subcommands) {
    top += ".TP\n.B " + Roff(s.path) + "\n" + Roff(s.help) + "; see \\fB" +
           Roff(program + "-" + s.path) + "\\fR(1).\n";
  }
  top += ".SH OPTIONS\n" + OptionsRoff(root);
  top += kExitStatus;
  top +=
      ".SH FILES\n.TP\n/etc/gpufleet/cluster.yaml\nThe node's cluster spec, as the package "
      "installs it (edit it to describe your cluster).\n.TP\n/etc/default/gpufleet\nThe "
      "agent service's flags.\n";
  top += ".SH SEE ALSO\n";
  std::vector<std::string> refs;
  for (const auto& s : root.subcommands)
    refs.push_back("\\fB" + Roff(program + "-" + s.path) + "\\fR(1)");
  top += Join(refs, ",\n") + "\n.PP\nThe full documentation: /usr/share/doc/" + program + "/\n";
  pages.emplace_back(program + ".1", top);

  for (const auto& cmd : root.subcommands) {
    const std::string name = program + "-" + cmd.path;
    std::string p = header(name);
    p += ".SH NAME\n" + Roff(name) + " \\- " + Roff(cmd.help) + "\n";
    p += ".SH SYNOPSIS\n";
    if (cmd.subcommands.empty()) {
      p += SynopsisRoff(cmd, program);
    } else {
      bool first = true;
      for (const auto& s : cmd.subcommands) {
        p += (first ? "" : ".br\n") + SynopsisRoff(s, program);
        first = false;
      }
    }
    p += ".SH DESCRIPTION\n" + Roff(cmd.help) + ".\n";
    if (!cmd.options.empty()) p += ".SH OPTIONS\n" + OptionsRoff(cmd);
    if (!cmd.subcommands.empty()) {
      p += ".SH COMMANDS\n";
      for (const auto& s : cmd.subcommands) {
        p += ".SS \"" + Roff(program + " " + s.path) + "\"\n" + Roff(s.help) + ".\n";
        p += OptionsRoff(s);
      }
    }
    p += kExitStatus;
    p += ".SH SEE ALSO\n\\fB" + Roff(program) +
         "\\fR(1)\n.PP\nThe full documentation: /usr/share/doc/" + program + "/\n";
    pages.emplace_back(name + ".1", p);
  }
  return pages;
}

}  // namespace gpufleet::cli
