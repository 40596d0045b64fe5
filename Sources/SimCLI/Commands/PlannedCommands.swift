// Commands whose contract (cli.md) is fixed but which are not built yet. Each shows its help
// and, when run, says what it arrives with and exits 64.







enum CompareCommand {
  static let spec = CommandSpec(
    name: "compare", summary: "Table of policies × scenarios → violation counts by kind.",
    options: [
      .value("--scenario", "FILE|NAME", "A scenario to include (repeatable).", repeatable: true),
      .value("--policies", "all|P,P", "The policies to compare."),
      .value("--seeds", "A..B", "The seeds to run each pair on."),
      .value("--format", "FORMAT", "Output format.", choices: ["text", "json", "markdown"]),
    ])
  static let command = Command.notBuilt(spec, arrives: "the fuzzer")
}

enum ExplainCommand {
  static let spec = CommandSpec(
    name: "explain", summary: "The causal chain behind every anomaly of a run.",
    positionals: [.init(name: "FILE|NAME", help: "A scenario file or name.")],
    options: [
      .value("--seed", "N", "Override the scenario's seed."),
      .value("--policy", "SPEC", "Override the policy."),
    ])
  static let command = Command.notBuilt(spec, arrives: "the timeline and explanations")
}
