import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli explain FILE|NAME`: the causal chain behind every anomaly of one run.
enum ExplainCommand {
  static let spec = CommandSpec(
    name: "explain", summary: "The causal chain behind every anomaly of a run.",
    discussion: """
      Runs the scenario like 'sim-cli run' and, for every anomaly, prints the intents involved, the
      messages that carried the record in the order they happened, and why the winner won (arrival
      order, device clocks and skews, HLC stamps, a tombstone purged after the retention window…).
      Exit 0 when every expectation held, 1 when one failed, 65 for a bad scenario file.
      """,
    positionals: [.init(name: "FILE|NAME", help: "A scenario file, or the name of one in scenarios/ (see 'sim-cli list').")],
    options: [
      .value("--seed", "N", "Override the scenario's seed."),
      .value("--policy", "SPEC", "Override the policy, e.g. 'field-lww-hlc delete=tombstone'."),
      ScenarioOptions.appOption,
    ],
    examples: ["sim-cli explain fat-note-lww", "sim-cli explain skewed-clock --policy field-lww-hlc"])

  static let command = Command(spec: spec) { args, console in
    let (file, seed, policy): (ScenarioFile, UInt64?, PolicySpec?)
    let app: AppUnderTest?
    do throws(CommandExit) {
      app = try ScenarioOptions.app(args, spec: spec, console: console)
      (file, seed, policy) = try ScenarioOptions.run(args, spec: spec, console: console)
    } catch {
      return error.code
    }
    if let refused = ScenarioOptions.refusingSharing(file, app: app, spec: spec, console: console) { return refused }
    // The full trace is kept only for a run with anomalies to explain (issue 28, item 5).
    let (text, result) = Explanation.run(file, app: app, seed: seed, policy: policy)
    console.out(text)
    return result.report.passed ? .success : .failure
  }
}
