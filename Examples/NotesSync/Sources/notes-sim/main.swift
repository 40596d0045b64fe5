import Foundation
import Scenarios
import SimCLI
import SimSyncEngine

// sim-cli with this package's apps registered: `run`, `fuzz`, `shrink` and `explain` take
// `--app NAME`, and everything else works as in sim-cli.
//
//   swift run notes-sim fuzz --app RemindersApp --seeds 1..1000
let apps = [AppUnderTest(RemindersApp.self), AppUnderTest(RemindersAppNotCascading.self), AppUnderTest(NotesApp.self)]
exit(SimCLI.runAsProcess(arguments: Array(CommandLine.arguments.dropFirst()), apps: apps).rawValue)
