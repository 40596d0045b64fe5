import Replica
@_spi(Kernel) import Simulator

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
