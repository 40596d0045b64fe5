import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli list`: every scenario a name can run — the built-in ones and the user's — with where
/// each comes from and its about line.
///
/// One line per name, the name first (`sim-cli list | awk '{print $1}'` gives the names):
///
///     delete-vs-edit         built-in                     The phone deletes a note …
///     mine                   ./scenarios/                 My own.
///     two-device-acceptance  ./scenarios/ (hides built-in)  …
enum ListCommand {
  static let spec = CommandSpec(
    name: "list", summary: "List the named scenarios (built-in and your own) with where each comes from and its about line.",
    discussion: """
      A name is looked up in $CONFLICT_SIM_SCENARIOS, then in scenarios/ in the working
      directory and its parents, then among the built-in scenarios; the first that has it wins,
      and that is the one listed. A file that hides another of the same name says so:
      '(hides built-in)', or '(= built-in)' when the two are the same text.
      """,
    options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    let entries = ScenarioLocator.catalog()
    var abouts: [String] = []
    var bad = false
    for entry in entries {
      do {
        let file = try ScenarioLocator.load(entry.name)
        abouts.append(file.about ?? "")
      } catch {
        switch error as? Scenario.LoadError {
        case .unreadable(_, let reason)?: abouts.append("(cannot be read: \(reason))")
        case .fileNotFound?, .notFound?:
          // Listed, yet no file of that name: a name whose bytes are not UTF-8 (read with
          // U+FFFD in their place), or a file removed since.
          abouts.append("(cannot be opened: its file name is not UTF-8, or it is gone)")
        default: abouts.append("(does not parse: run '\(ToolName.current) check \(entry.name)')")
        }
        bad = true
      }
    }
    if args.value("--format") == "json" {
      console.out(json(entries, abouts: abouts).serialized() + "\n")
    } else if entries.isEmpty {
      console.err("No named scenarios found; looked in: \(ScenarioLocator.searchFolders().joined(separator: ", "))\n")
    } else {
      console.out(text(entries, abouts: abouts))
      if entries.contains(where: \.shadows) {
        console.err("note: '\(ToolName.current) run NAME' runs the one listed, not the ones it hides; run a hidden file by its path.\n")
      }
    }
    return bad ? .dataError : .success
  }

  /// `[{"name", "about", "origin", "path", "hides": [{"origin", "identical"}]}]`; `path` is
  /// null for a built-in scenario.
  static func json(_ entries: [ScenarioLocator.Entry], abouts: [String]) -> JSONValue {
    .array(
      zip(entries, abouts).map { entry, about in
        [
          "name": .string(entry.name), "about": .string(about), "origin": .string(entry.origin.label),
          "path": entry.path.map { .string($0) } ?? .null,
          "hides": .array(entry.hidden.map { ["origin": .string($0.origin.label), "identical": .bool($0.identical)] }),
        ]
      })
  }

  /// One line per entry: name, origin (with what it hides), about line.
  static func text(_ entries: [ScenarioLocator.Entry], abouts: [String]) -> String {
    let origins = entries.map(originText)
    let nameWidth = entries.map(\.name.count).max() ?? 0
    let originWidth = origins.map(\.count).max() ?? 0
    var out = ""
    for (i, entry) in entries.enumerated() {
      out += pad(entry.name, nameWidth + 2) + pad(origins[i], originWidth + 2) + abouts[i] + "\n"
    }
    return out
  }

  /// `built-in`, `./scenarios/`, `./scenarios/ (hides built-in)`, `./scenarios/ (= built-in)`.
  static func originText(_ entry: ScenarioLocator.Entry) -> String {
    guard !entry.hidden.isEmpty else { return entry.origin.label }
    let notes = entry.hidden.map { ($0.identical ? "= " : "hides ") + $0.origin.label }
    return entry.origin.label + " (" + notes.joined(separator: ", ") + ")"
  }

  static func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
