import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli completion bash|zsh|fish`: a completion script for the shell, made from the commands'
/// own declarations — commands, their options, fixed choices, presets and named scenarios.
enum CompletionCommand {
  static let shells = ["bash", "zsh", "fish"]

  static let spec = CommandSpec(
    name: "completion", summary: "Print a shell completion script (bash, zsh or fish).",
    discussion: """
      Completes commands, their options, the values of options with fixed choices (--format),
      policy presets after --policy and --policies, and scenario names (the named scenarios,
      built-in and in scenarios/) where a command takes FILE|NAME; files complete as usual.
      """,
    positionals: [.init(name: "SHELL", help: "bash, zsh or fish.")],
    subjects: shells,
    examples: [
      "sim-cli completion bash > /etc/bash_completion.d/sim-cli", "sim-cli completion zsh > \"${fpath[1]}/_sim-cli\"",
      "sim-cli completion fish > ~/.config/fish/completions/sim-cli.fish",
    ])

  static let command = Command(spec: spec) { args, console in
    let visible = SimCLI.commands.map(\.spec)
    let presets = PolicyPreset.all.map(\.name)
    var scenarios = Scenario.builtInNames
    for (name, _) in ScenarioLocator.named() where !scenarios.contains(name) { scenarios.append(name) }
    switch args.positionals[0] {
    case "bash": console.out(forTool(bash(visible, presets: presets, scenarios: scenarios)))
    case "zsh": console.out(forTool(zsh(visible, presets: presets, scenarios: scenarios)))
    default: console.out(forTool(fish(visible, presets: presets, scenarios: scenarios)))
    }
    return .success
  }

  /// The script for the tool running (``ToolName/current``): a tool of the user's own completes
  /// its own name, with a shell function named after it (`_notes_sim`).
  static func forTool(_ script: String) -> String {
    let tool = ToolName.current
    guard tool != "sim-cli" else { return script }
    let function = "_" + String(tool.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    return script.replacingOccurrences(of: "_sim_cli", with: function).replacingOccurrences(of: "sim-cli", with: tool)
  }

  static func takesScenario(_ c: CommandSpec) -> Bool { c.positionals.contains { $0.name.contains("NAME") } }

  /// Whether the command's arguments are files or folders (`report FILE.jsonl…`, `import PATH`).
  static func takesFiles(_ c: CommandSpec) -> Bool { c.positionals.contains { $0.name.contains("FILE") || $0.name.contains("PATH") } }

  static func bash(_ commands: [CommandSpec], presets: [String], scenarios: [String]) -> String {
    var out = """
      # bash completion for sim-cli (sim-cli completion bash)
      _sim_cli() {
        local cur prev cmd
        cur="${COMP_WORDS[COMP_CWORD]}"
        prev="${COMP_WORDS[COMP_CWORD-1]}"
        cmd="${COMP_WORDS[1]}"
        if [ "$COMP_CWORD" -eq 1 ]; then
          COMPREPLY=( $(compgen -W "\(commands.map(\.name).joined(separator: " ")) help --help --version" -- "$cur") )
          return
        fi
        case "$prev" in
          --policy|--policies) COMPREPLY=( $(compgen -W "\(presets.joined(separator: " "))" -- "$cur") ); return ;;
          --scenario) COMPREPLY=( $(compgen -W "\(scenarios.joined(separator: " ")) default" -- "$cur") $(compgen -f -- "$cur") ); return ;;

      """
    var choices: [String: [String]] = [:]
    for c in commands { for o in c.options where !o.choices.isEmpty { choices[o.name, default: []] += o.choices } }
    for name in choices.keys.sorted() {
      var unique: [String] = []
      for v in choices[name]! where !unique.contains(v) { unique.append(v) }
      out += "    \(name)) COMPREPLY=( $(compgen -W \"\(unique.joined(separator: " "))\" -- \"$cur\") ); return ;;\n"
    }
    out += "  esac\n  case \"$cmd\" in\n"
    for c in commands {
      let options = c.options.map(\.name) + ["--help"]
      let words = (options + c.subjects + (takesScenario(c) ? scenarios : [])).joined(separator: " ")
      let files = takesScenario(c) || takesFiles(c) ? " $(compgen -f -- \"$cur\")" : ""
      out += "    \(c.name)) COMPREPLY=( $(compgen -W \"\(words)\" -- \"$cur\")\(files) ) ;;\n"
    }
    out += "    help) COMPREPLY=( $(compgen -W \"\(commands.map(\.name).joined(separator: " "))\" -- \"$cur\") ) ;;\n"
    out += "  esac\n}\ncomplete -F _sim_cli sim-cli\n"
    return out
  }

  static func zsh(_ commands: [CommandSpec], presets: [String], scenarios: [String]) -> String {
    var out = "#compdef sim-cli\n# zsh completion for sim-cli (sim-cli completion zsh)\n_sim_cli() {\n  local -a commands\n  commands=(\n"
    for c in commands { out += "    '\(c.name):\(zshEscape(c.summary))'\n" }
    out += "  )\n  if (( CURRENT == 2 )); then\n    _describe 'command' commands\n    return\n  fi\n  case $words[2] in\n"
    for c in commands {
      out += "    \(c.name))\n      _arguments \\\n"
      for o in c.options {
        let help = zshEscape(o.help)
        if o.valueName == nil {
          out += "        '\(o.name)[\(help)]' \\\n"
        } else if !o.choices.isEmpty {
          out += "        '\(o.name)[\(help)]:value:(\(o.choices.joined(separator: " ")))' \\\n"
        } else if o.name == "--policy" || o.name == "--policies" {
          out += "        '\(o.name)[\(help)]:policy:(\(presets.joined(separator: " ")))' \\\n"
        } else if o.name == "--scenario" {
          out += "        '\(o.name)[\(help)]:scenario:(\(scenarios.joined(separator: " ")) default)' \\\n"
        } else {
          out += "        '\(o.name)[\(help)]:\(o.valueName!.lowercased()):' \\\n"
        }
      }
      if !c.subjects.isEmpty {
        out += "        '1:subject:(\(c.subjects.joined(separator: " ")))' \\\n"
      } else if takesScenario(c) {
        out += "        '*:scenario:(\(scenarios.joined(separator: " ")))' '*:file:_files' \\\n"
      } else if takesFiles(c) {
        out += "        '*:file:_files' \\\n"
      }
      out += "        '--help[Show help.]'\n      ;;\n"
    }
    out += "  esac\n}\n_sim_cli \"$@\"\n"
    return out
  }

  static func fish(_ commands: [CommandSpec], presets: [String], scenarios: [String]) -> String {
    var out = "# fish completion for sim-cli (sim-cli completion fish)\ncomplete -c sim-cli -f\n"
    for c in commands {
      out += "complete -c sim-cli -n '__fish_use_subcommand' -a \(c.name) -d '\(fishEscape(c.summary))'\n"
    }
    for c in commands {
      let when = "__fish_seen_subcommand_from \(c.name)"
      for o in c.options {
        let long = String(o.name.dropFirst(2))
        var line = "complete -c sim-cli -n '\(when)' -l \(long) -d '\(fishEscape(o.help))'"
        if o.valueName != nil {
          line += " -r"
          if !o.choices.isEmpty {
            line += " -a '\(o.choices.joined(separator: " "))'"
          } else if o.name == "--policy" || o.name == "--policies" {
            line += " -a '\(presets.joined(separator: " "))'"
          } else if o.name == "--scenario" {
            line += " -a '\(scenarios.joined(separator: " ")) default' -F"
          } else {
            line += " -F"
          }
        }
        out += line + "\n"
      }
      if !c.subjects.isEmpty {
        out += "complete -c sim-cli -n '\(when)' -a '\(c.subjects.joined(separator: " "))'\n"
      } else if takesScenario(c) {
        out += "complete -c sim-cli -n '\(when)' -a '\(scenarios.joined(separator: " "))' -F\n"
      } else if takesFiles(c) {
        out += "complete -c sim-cli -n '\(when)' -F\n"
      }
    }
    return out
  }

  static func zshEscape(_ s: String) -> String {
    s.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(").replacingOccurrences(of: "]", with: ")")
      .replacingOccurrences(of: ":", with: "\\:")
  }

  static func fishEscape(_ s: String) -> String { s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") }
}
