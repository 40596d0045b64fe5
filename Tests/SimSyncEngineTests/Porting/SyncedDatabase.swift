import Foundation
import SimSyncEngine

/// The store, an actor as in Apple's sample: it reads its data in `init` and makes its engine,
/// with itself as the delegate, in an `async` method called at launch.
actor SyncedDatabase {
  let device: SimDevice
  var appData: AppData
  /// The engine. The app reads it between calls (the simulator makes every call on one thread).
  nonisolated(unsafe) var syncEngine: SyncEngine?

  init(device: SimDevice) {
    self.device = device
    appData = device.disk["contacts.json"].flatMap { try? JSONDecoder().decode(AppData.self, from: $0) } ?? AppData()
    // No `Task { await self.initializeSyncEngine() }` here: a Task runs outside the simulator.
  }

  func initializeSyncEngine() {
    syncEngine = SyncEngine(.init(database: device.database, stateSerialization: appData.stateSerialization, delegate: self))
  }
}

/// The app around it: its launch runs the actor's setup to the end.
final class SyncedContactsApp: SimApp {
  let database: SyncedDatabase
  var syncEngine: SyncEngine { database.syncEngine! }

  init(device: SimDevice) {
    database = SyncedDatabase(device: device)
    try! device.runToCompletion { [database] in await database.initializeSyncEngine() }
  }

  func perform(_ intent: AppIntent) async -> Bool { await database.perform(intent) }
  func shownRecords() async -> [SyncRecord] { await database.shownRecords() }
}
