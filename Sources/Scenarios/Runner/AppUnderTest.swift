import Replica

/// A user's app and its sync engine, run on every device of a scenario or fuzz seed instead of
/// the engine of a preset. Made by the `SimSyncEngine` product (`AppUnderTest(NotesApp.self)`);
/// the runner, the fuzzer, the shrinker and `sim-cli` take one where they take a policy.
///
/// The server behaves as CloudKit does for `CKSyncEngine` (saves conditional on the change tag,
/// tombstones), so scenarios are judged under the settings of `sync-engine-merge`; reports and
/// fuzz records name the policy `app NAME`.
public struct AppUnderTest: Sendable {
  /// The app's name in reports (`app NotesApp`) and on the command line (`--app NotesApp`).
  public let name: String
  /// Per run: the drivers of that run's devices (they share what the run needs to share).
  package let drivers: @Sendable (ScenarioRunner.Plan) -> (Int) -> any AppDriver

  /// An app under test called `name`, whose devices are driven by `drivers(plan)(device)`.
  package init(name: String, drivers: @escaping @Sendable (ScenarioRunner.Plan) -> (Int) -> any AppDriver) {
    self.name = name
    self.drivers = drivers
  }

  /// The policy a user's app is judged under: the server and oracle settings of a
  /// `CKSyncEngine` app (`sync-engine-merge`).
  public static let judgedAs: PolicySpec = {
    guard case .success(let spec) = PolicySpec.parse("sync-engine-merge") else { preconditionFailure("sync-engine-merge is a preset") }
    return spec
  }()

  /// The policy name reports and fuzz records give a run of this app.
  public var policyName: String { "app \(name)" }
}
