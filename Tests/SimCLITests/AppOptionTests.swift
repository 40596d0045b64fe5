import Foundation
import Scenarios
import SimSyncEngine
import Testing

@testable import SimCLI

/// `--app NAME`: the built `sim-cli` registers the library's example apps (the reference notes
/// app and its planted bugs); a tool built without apps says how to build one.
@Suite struct AppOptionTests {
  @Test func runTakesAnAppAndAPlantedBugFails() throws {
    let good = try runProcess(["run", "app-edit-under-fetch", "--app", "NotesApp"])
    #expect(good.code == 0, "\(good.stdout)\(good.stderr)")
    #expect(good.stdout.contains("policy app NotesApp, seed 1"))
    let bad = try runProcess(["run", "app-edit-under-fetch", "--app", "NotesAppOverwritingPendingEdits"])
    #expect(bad.code == 1)
    #expect(bad.stdout.contains("lost-edit"))
    #expect(bad.stdout.contains("the app's code applied it over the edit"))
    #expect(bad.stdout.contains("reproduce: sim-cli run app-edit-under-fetch --seed 1 --app NotesAppOverwritingPendingEdits"))
  }

  /// A scenario that shares is refused with an app that does not say it shares (a usage error
  /// that says why and what to do), and so is `fuzz --sharing --app`; an app that shares runs
  /// both.
  @Test func aScenarioThatSharesIsRefusedWithAnAppThatDoesNotShare() {
    let apps = [AppUnderTest(NotesApp.self), AppUnderTest(SharingNotesApp.self)]
    for command in ["run", "explain", "shrink"] {
      let (console, captured) = Console.capturing()
      let code = SimCLI.main(arguments: [command, "participant-removed", "--app", "NotesApp"], console: console, apps: apps, toolName: "sim-cli")
      #expect(code == .usage, "\(command)")
      #expect(captured.stderr.contains("participant-removed shares (share trip), and NotesApp does not say it shares"), "\(command)")
    }
    let (console, captured) = Console.capturing()
    let code = SimCLI.main(
      arguments: ["fuzz", "--sharing", "--app", "NotesApp", "--seeds", "1..2"], console: console, apps: apps, toolName: "sim-cli")
    #expect(code == .usage)
    #expect(captured.stderr.contains("the app does not say it shares (SimApp.sharesRecords)"))
    let (runConsole, ran) = Console.capturing()
    _ = SimCLI.main(arguments: ["run", "participant-removed", "--app", "SharingNotesApp"], console: runConsole, apps: apps, toolName: "sim-cli")
    #expect(ran.stdout.contains("found no violations"), "\(ran.stdout)\(ran.stderr)")
    let (fuzzConsole, fuzzed) = Console.capturing()
    let fuzzCode = SimCLI.main(
      arguments: ["fuzz", "--sharing", "--app", "SharingNotesApp", "--seeds", "1..4"], console: fuzzConsole, apps: apps, toolName: "sim-cli")
    #expect(fuzzCode == .success, "\(fuzzed.stdout)\(fuzzed.stderr)")
    #expect(fuzzed.stdout.contains("fuzz app SharingNotesApp on sharing: 4 seeds, 0 failing"), "\(fuzzed.stdout)")
    let (hierarchyConsole, hierarchy) = Console.capturing()
    let hierarchyCode = SimCLI.main(
      arguments: ["run", "share-after-child-saved", "--app", "SharingNotesApp"], console: hierarchyConsole, apps: apps, toolName: "sim-cli")
    // (The lesson expects the built-in engine's stalled share: the app's is made, with no violation.)
    #expect(hierarchyCode == .failure, "\(hierarchy.stdout)\(hierarchy.stderr)")
    #expect(hierarchy.stdout.contains("found no violations"), "\(hierarchy.stdout)")
  }

  /// A tool of your own (`SimCLI.runAsProcess` names it after the program) suggests commands
  /// that run it, not `sim-cli`, which does not have your apps.
  @Test func aToolOfYourOwnSuggestsCommandsThatRunIt() {
    let apps = [AppUnderTest(NotesAppOverwritingPendingEdits.self)]
    let (console, captured) = Console.capturing()
    let code = SimCLI.main(
      arguments: ["run", "app-edit-under-fetch", "--app", "NotesAppOverwritingPendingEdits"], console: console, apps: apps, toolName: "notes-sim")
    #expect(code == .failure)
    #expect(captured.stdout.contains("reproduce: notes-sim run app-edit-under-fetch --seed 1 --app NotesAppOverwritingPendingEdits"))
    let (fuzzConsole, fuzzed) = Console.capturing()
    _ = SimCLI.main(
      arguments: ["fuzz", "--app", "NotesAppOverwritingPendingEdits", "--seeds", "2..2", "--jobs", "1"], console: fuzzConsole, apps: apps,
      toolName: "notes-sim")
    #expect(fuzzed.stdout.contains("again:     notes-sim fuzz --seeds 2..2 --app NotesAppOverwritingPendingEdits"), "\(fuzzed.stdout)")
    let (usageConsole, usage) = Console.capturing()
    #expect(SimCLI.main(arguments: ["rnu"], console: usageConsole, apps: apps, toolName: "notes-sim") == .usage)
    #expect(usage.stderr.contains("See 'notes-sim --help'."), "\(usage.stderr)")
    // sim-cli itself is still sim-cli.
    let (plain, plainOut) = Console.capturing()
    _ = SimCLI.main(arguments: ["run", "app-edit-under-fetch", "--app", "NotesAppOverwritingPendingEdits"], console: plain, apps: apps)
    #expect(plainOut.stdout.contains("reproduce: sim-cli run app-edit-under-fetch"))
  }

  @Test func fuzzShrinksAnAppFailureAndReplaysItWithTheApp() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-fuzz-\(getpid())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let r = try runProcess(["fuzz", "--app", "NotesAppGivingUpOnTransientErrors", "--seeds", "2..2", "--minimize-to", folder.path])
    #expect(r.code == 1, "\(r.stdout)\(r.stderr)")
    #expect(r.stdout.contains("(in the app's code)"))
    #expect(r.stdout.contains("again:     sim-cli fuzz --seeds 2..2 --app NotesAppGivingUpOnTransientErrors"))
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".scenario") }
    let file = try #require(files.first)
    let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
    #expect(text.contains("app NotesAppGivingUpOnTransientErrors: run it with --app NotesAppGivingUpOnTransientErrors"))
    // The shrunk file fails again with the app, and passes with the reference app.
    let again = try runProcess(["run", folder.appendingPathComponent(file).path, "--app", "NotesAppGivingUpOnTransientErrors"])
    #expect(again.code == 1)
    let reference = try runProcess(["run", folder.appendingPathComponent(file).path, "--app", "NotesApp"])
    #expect(reference.code == 0, "\(reference.stdout)")
  }

  @Test func explainAndTheTimelineTakeAnApp() throws {
    let svg = FileManager.default.temporaryDirectory.appendingPathComponent("app-timeline-\(getpid()).svg")
    defer { try? FileManager.default.removeItem(at: svg) }
    let explain = try runProcess(["explain", "app-edit-under-fetch", "--app", "NotesAppOverwritingPendingEdits"])
    #expect(explain.code == 1 || explain.code == 0, "\(explain.stderr)")
    #expect(explain.stdout.contains("i3"), "\(explain.stdout)")
    let run = try runProcess(["run", "app-killed-before-sync", "--app", "NotesAppNotPersistingState", "--timeline", svg.path])
    #expect(run.code == 1)
    #expect(FileManager.default.fileExists(atPath: svg.path))
  }

  @Test func aMisspelledAppGetsTheListAndDidYouMean() throws {
    let r = try runProcess(["run", "app-zone-busy", "--app", "NotesAp"])
    #expect(r.code == 64)
    #expect(r.stderr.contains("expected one of: NotesApp, NotesAppOverwritingPendingEdits"))
    #expect(r.stderr.contains("Did you mean 'NotesApp'?"))
  }

  @Test func anAppWithAPolicyIsAUsageError() throws {
    let r = try runProcess(["run", "app-zone-busy", "--app", "NotesApp", "--policy", "crdt"])
    #expect(r.code == 64)
    #expect(r.stderr.contains("--app and --policy cannot be used together"))
  }

  @Test func aToolWithoutAppsSaysHowToBuildOne() {
    let r = runCLI("run", "app-zone-busy", "--app", "NotesApp")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("SimCLI.runAsProcess(arguments:apps:)"))
  }

  @Test func checkDeterminismRunsTheAppInAnotherProcess() throws {
    let r = try runProcess(["run", "app-edit-under-fetch", "--app", "NotesApp", "--check-determinism"])
    #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
    #expect(r.stdout.contains("runs in this process and another"))
    #expect(r.stdout.contains("✓ deterministic: two runs made the same"))
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("behaviour-\(getpid()).log")
    defer { try? FileManager.default.removeItem(at: log) }
    let written = try runProcess(["run", "app-edit-under-fetch", "--app", "NotesApp", "--behaviour-log", log.path])
    #expect(written.code == 0)
    let text = try String(contentsOf: log, encoding: .utf8)
    #expect(text.hasPrefix("trace "))
    #expect(text.contains("\tiPad\tintent i1\tshows n1{"))
  }

  @Test func checkDeterminismWithoutAnAppIsAUsageError() {
    let r = runCLI("run", "fat-note-lww", "--check-determinism")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("--check-determinism checks a user's app: give --app NAME."))
  }
}
