import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli list`: the named scenarios with their about lines.
enum ListCommand {
  static let spec = CommandSpec(name: "list", summary: "List the named scenarios with their about lines.", options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    let named = ScenarioLocator.named()
    var rows: [(String, String)] = []
    var bad = false
    for (name, _) in named {
      do {
        let file = try ScenarioLocator.load(name)
        rows.append((name, file.about ?? ""))
      } catch {
        rows.append((name, "(does not parse: run 'sim-cli check \(name)')"))
        bad = true
      }
    }
    if args.value("--format") == "json" {
      console.out(JSONValue.array(rows.map { ["name": .string($0.0), "about": .string($0.1)] }).serialized() + "\n")
    } else if rows.isEmpty {
      console.err("No named scenarios found; looked in: \(ScenarioLocator.searchFolders().joined(separator: ", "))\n")
    } else {
      let width = rows.map(\.0.count).max() ?? 0
      for (name, about) in rows {
        console.out(name + String(repeating: " ", count: width - name.count + 2) + about + "\n")
      }
    }
    return bad ? .dataError : .success
  }
}

/// `sim-cli check FILE|NAME...`: parse and lint, including CloudKit-safety.
enum CheckCommand {
  static let spec = CommandSpec(
    name: "check", summary: "Parse and lint scenarios without running them (CloudKit-safety included).",
    discussion: "Exit 0 when every file parses (safety findings are warnings), 65 when one does not.",
    positionals: [.init(name: "FILE|NAME", help: "Scenario files or names.", variadic: true)],
    options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    var worst: ExitCode = .success
    var results: [JSONValue] = []
    for item in args.positionals {
      let file: ScenarioFile
      do throws(CommandExit) {
        file = try ScenarioOptions.load(item, console: console)
      } catch {
        if error.code == .dataError || worst == .success { worst = error.code }
        results.append(["file": .string(item), "ok": false])
        continue
      }
      let findings = file.schema.safetyFindings()
      results.append([
        "file": .string(item), "ok": true,
        "findings": .array(
          findings.map {
            [
              "type": .string($0.type), "field": $0.field.map { .string($0) } ?? .null, "problem": .string($0.problem.rawValue),
              "message": .string($0.message),
            ]
          }),
      ])
      if args.value("--format") != "json" {
        console.out(
          "\(item): ok (\(file.devices.count) devices, \(file.schema.types.count) types, \(file.timeline.count) timeline lines, policy \(file.policy))\n"
        )
        for f in findings { console.out("  warning: \(f.message)\n") }
      }
    }
    if args.value("--format") == "json" { console.out(JSONValue.array(results).serialized() + "\n") }
    return worst
  }
}

/// `sim-cli policies`: presets with their descriptions and axis values.
enum PoliciesCommand {
  static let spec = CommandSpec(name: "policies", summary: "List the policy presets with their axis values.", options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    if args.value("--format") == "json" {
      let value = JSONValue.array(
        PolicyPreset.all.map { p in
          var axes: [String: JSONValue] = [:]
          for (k, v) in p.settings.pairs { axes[k] = .string(v) }
          return [
            "name": .string(p.name), "models": .string(p.models), "knownToLose": .string(p.knownToLose), "plantedBug": .bool(p.plantedBug),
            "settings": .object(axes),
          ]
        })
      console.out(value.serialized() + "\n")
      return .success
    }
    var out = ""
    for p in PolicyPreset.all {
      out += "\(p.name)\(p.plantedBug ? "  (planted bug)" : "")\n"
      out += "  models:        \(p.models)\n"
      out += "  known to lose: \(p.knownToLose)\n"
      out += "  axes:          \(p.settings.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " "))\n\n"
    }
    out += "A policy is a preset plus overrides: --policy 'field-lww-hlc delete=hard retention=7d'.\n"
    console.out(out)
    return .success
  }
}
