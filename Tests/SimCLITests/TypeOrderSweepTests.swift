import Foundation
import Scenarios
import Testing

@testable import SimCLI
@testable import SimSyncEngine

/// `selftest --type-orders`: a slice of the sweep `scripts/nightly` runs — two schemas (the
/// check's folders-first file and the essay's three types) in every order × three apps × a few
/// short seeds — and the problems it must report: an app that stops with a diagnostic, a
/// schema that does not survive being reordered, an unclear diagnostic, a crash.
@Suite struct TypeOrderSweepTests {
  static let foldersFirst = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Data/folders-first-fuzz.scenario")
    .path

  static func scenarios() throws -> [(argument: String, given: Bool, file: ScenarioFile)] {
    [
      ("two-device-acceptance", false, try Scenario.load("two-device-acceptance")),
      ("folders-first-fuzz.scenario", true, try Scenario.load(foldersFirst)),
    ]
  }

  @Test func everyOrderOfEveryTypeRunsOnEveryAppWithoutAnInternalError() throws {
    let apps = [AppUnderTest(NotesApp.self), AppUnderTest(NotesAppOverwritingPendingEdits.self), AppUnderTest(RemindersApp.self)]
    let sweep = TypeOrderSweep(scenarios: try Self.scenarios(), apps: apps, intents: 5)
    // 3! + 2! orders for each app of any types; the reminders app states its schema (List,
    // Reminder): its own two orders.
    #expect(sweep.units.count == 8 + 8 + 2)
    let essay = sweep.units.filter { $0.app == 0 && $0.source == 0 }.map { $0.order.joined(separator: " ") }
    #expect(
      essay == [
        "Note Stroke Preference", "Note Preference Stroke", "Stroke Note Preference", "Stroke Preference Note", "Preference Note Stroke",
        "Preference Stroke Note",
      ])
    #expect(sweep.units.filter { $0.app == 2 }.map(\.order) == [["List", "Reminder"], ["Reminder", "List"]])
    // Each reordered schema is the same schema, its types declared in that order.
    for unit in sweep.units {
      #expect(unit.problem == nil)
      let schema = unit.shape.base?.schema ?? unit.runs.schema!
      #expect(schema.types.map(\.name) == unit.order)
      let original = unit.source.map { sweep.sources[$0].file.schema } ?? apps[unit.app].schema!
      #expect(Set(schema.types.map(\.name)) == Set(original.types.map(\.name)))
      for type in schema.types { #expect(original.types.contains(type)) }
    }

    let outcome = sweep.run(seeds: 1...4, jobs: 2)
    #expect(outcome.byApp.map(\.runs) == [32, 32, 8])
    #expect(outcome.byApp.map(\.orders) == [8, 8, 2])
    #expect(outcome.total.internalErrors == 0)
    #expect(outcome.diagnostics.isEmpty, "\(outcome.diagnostics.map(\.reason))")
    #expect(outcome.total.refused == 0)
    #expect(outcome.byApp.allSatisfy { $0.applied > 0 })
    // The planted app loses edits (its bug, counted, not the sweep's).
    #expect(outcome.byApp[1].failing > 0)
    #expect(outcome.byApp[0].failing == 0)
    let table = sweep.table(outcome)
    #expect(table.hasPrefix("app                              orders  runs  failing  refused  stopped  internal\n"), "\(table)")
    #expect(table.contains("\nNotesApp                              8    32        0        0        0         0\n"), "\(table)")
    #expect(table.contains("\ntotal                                18    72"), "\(table)")
    #expect(sweep.failingText(outcome).contains("  NotesAppOverwritingPendingEdits, seed "))
  }

  @Test func anAppThatStopsIsListedOnceWithACommandThatRunsIt() throws {
    let files = try Self.scenarios().suffix(1)
    let sweep = TypeOrderSweep(scenarios: Array(files), apps: [AppUnderTest(NotesAppWaitingElsewhere.self)], intents: 5)
    let outcome = sweep.run(seeds: 1...3, jobs: 1)
    #expect(outcome.total.runs == 6)
    #expect(outcome.total.stopped == 6)
    #expect(outcome.diagnostics.count == 1)
    let d = try #require(outcome.diagnostics.first)
    #expect(d.runs == 6)
    #expect(d.reason.hasPrefix("the delegate's call waited on something outside the simulator"))
    #expect(d.unclear == nil)
    #expect(
      sweep.reproduction(unit: d.unit, seed: d.seed)
        == "sim-cli selftest --type-orders --no-named --scenario folders-first-fuzz.scenario --order Folder,Note --app NotesAppWaitingElsewhere --seeds 1..1 --intents 5"
    )
    #expect(sweep.fuzzCommand(unit: 1, seed: 2) == nil)  // Note, Folder: not the declared order
    let (console, captured) = Console.capturing()
    #expect(sweep.runAndPrint(seeds: 1...1, jobs: 1, verbose: false, console: console) == .success)
    #expect(
      captured.stdout.contains("(also: sim-cli fuzz --app NotesAppWaitingElsewhere --scenario folders-first-fuzz.scenario --seeds 1..1 --intents 5)"))
  }

  @Test func aSchemaThatDoesNotSurviveReorderingIsAnInternalError() throws {
    var file = try Scenario.load(Self.foldersFirst)
    file.schema.types[0].name = "Folder Name"  // not a name a file can declare
    let sweep = TypeOrderSweep(scenarios: [("broken", true, file)], apps: [AppUnderTest(NotesApp.self)], intents: 5)
    #expect(sweep.units.count == 2)
    #expect(sweep.units.allSatisfy { $0.problem?.contains("does not parse once written") == true })
    let (console, captured) = Console.capturing()
    #expect(sweep.runAndPrint(seeds: 1...2, jobs: 1, verbose: false, console: console) == .internalError)
    #expect(captured.stdout.contains("2 internal errors"))
    #expect(captured.stdout.contains("internal errors — This is a bug in sim-cli"))
  }

  @Test func aDiagnosticMustBeAClearSentence() {
    #expect(TypeOrderSweep.unclearness("Fatal error: Index out of range") != nil)
    #expect(TypeOrderSweep.unclearness("released") != nil)
    #expect(TypeOrderSweep.unclearness("Optional(SimSyncEngine.SyncError(code: 3))") != nil)
    #expect(
      TypeOrderSweep.unclearness(
        "the delegate's call waited on something outside the simulator (an actor, the main actor, a timer): delegate code must only await the engine and its own async functions"
      ) == nil)
    #expect(TypeOrderSweep.reason("phone at 4.000s: the app's code stopped here") == "the app's code stopped here")
  }

  @Test func theOrdersOfALargeSchemaAreItsRotationsAndTheirReversals() {
    #expect(TypeOrderSweep.orders(of: 3).count == 6)
    #expect(TypeOrderSweep.orders(of: 6).count == 720)
    let seven = TypeOrderSweep.orders(of: 7)
    #expect(seven.count == 14)
    #expect(seven.first == Array(0..<7))
    #expect(seven.contains([6, 5, 4, 3, 2, 1, 0]))
  }

  @Test func optionsThatDoNotBelongAreUsageErrors() {
    let apps = [AppUnderTest(NotesApp.self), AppUnderTest(RemindersApp.self)]
    func run(_ args: String...) -> (ExitCode, String) {
      let (console, captured) = Console.capturing()
      let code = SimCLI.main(arguments: ["selftest"] + args, console: console, apps: apps)
      return (code, captured.stderr)
    }
    let workload = run("--type-orders", "--workload", "app")
    #expect(workload.0 == .usage)
    #expect(workload.1.contains("--workload is not allowed with --type-orders"))
    #expect(run("--type-orders", "--oracles").1.contains("cannot be used together"))
    #expect(run("--scenario", Self.foldersFirst).1.contains("'--scenario' applies only with --type-orders"))
    let app = run("--type-orders", "--no-named", "--scenario", Self.foldersFirst, "--app", "NotesAp")
    #expect(app.0 == .usage)
    #expect(app.1.contains("Did you mean 'NotesApp'?"), "\(app.1)")
    let order = run("--type-orders", "--no-named", "--scenario", Self.foldersFirst, "--app", "NotesApp", "--order", "Note,Foldr")
    #expect(order.0 == .usage)
    #expect(order.1.contains("Did you mean 'Note,Folder'?"), "\(order.1)")
  }

  /// A trap in a run ends the process with exit 70, and the report names that run and the
  /// command that runs it alone.
  @Test func aCrashNamesTheRunThatWasGoingOn() throws {
    var env = ProcessInfo.processInfo.environment
    env["SIM_CLI_TEST_TRAP_SEED"] = "2"
    let r = try runProcess(
      [
        "selftest", "--type-orders", "--no-named", "--scenario", Self.foldersFirst, "--app", "NotesApp", "--seeds", "1..2", "--intents", "2",
        "--jobs", "1",
      ],
      environment: env)
    #expect(r.code == 70)
    #expect(r.stderr.contains("internal error (exit 70)"))
    #expect(r.stderr.contains("running when it crashed"))
    #expect(
      r.stderr.contains(
        "✗ \(Self.foldersFirst) [Folder Note] × NotesApp, seed 2: sim-cli selftest --type-orders --no-named --scenario \(CrashReport.shellWord(Self.foldersFirst)) --order Folder,Note --app NotesApp --seeds 2..2 --intents 2   (this run crashed)"
      ), "\(r.stderr)")
  }
}

/// The reference notes app, waiting for ever on something outside the simulator when it is first
/// asked to make a change (a continuation nothing resumes: unlike a real timer, the same in
/// every run): the simulator stops its device with a diagnostic.
final class NotesAppWaitingElsewhere: SimApp, @unchecked Sendable {
  let notes: NotesApp
  var waited = false
  init(device: SimDevice) { notes = NotesApp(device: device) }
  var syncEngine: SyncEngine { notes.syncEngine }
  static var schema: AppSchema { NotesApp.schema }
  func perform(_ intent: AppIntent) async -> Bool {
    if !waited {
      waited = true
      await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    }
    return notes.perform(intent)
  }
  func shownRecords() async -> [SyncRecord] { notes.shownRecords() }
  func shownRecordChanges() async -> SimShownChanges? { await notes.shownRecordChanges() }
}
