// Commands whose contract (cli.md) is fixed but which are not built yet. Each shows its help
// and, when run, says what it arrives with and exits 64.








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
