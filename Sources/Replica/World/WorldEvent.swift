@_spi(Kernel) import Simulator

/// A device or the server.
package enum WorldNode: Hashable, Sendable, Comparable {
  case device(Int32)
  case server
}

/// What became of one copy of a message.
package enum Arrival: Hashable, Sendable {
  case delivered
  /// The receiver was offline (or the server down) at some moment since the send.
  case refused
  /// The sender had abandoned the request (killed, suspended, offline) before it arrived.
  case cutOff
  /// Dropped when it was sent.
  case droppedAtSend(DropReason)
}

/// A device's lifecycle or connectivity, changed by the timeline.
package enum DeviceChange: Hashable, Sendable {
  case killed
  case background(budget: SimDuration)
  case clockJumped(by: SimDuration)
  case online
  case offline
  /// Signed into this iCloud account (nil: signed out).
  case account(Int32?)
  /// The app was updated to this version.
  case upgraded(to: Int32)
  /// The app deleted (or changed in place) the file of the asset a record's field refers to;
  /// `name` nil: there was no such file on the device.
  case file(RecordKey, field: Int32, changed: Bool, name: String?)
  /// The system purged the device's staging area: `files` fetched asset files went.
  case stagingPurged(files: Int)
}

/// One thing that happened in a world, for people: what pictures, explanations and the JSON
/// Lines trace are made of. Kept (with ``WorldConfig/keepsEvents``) next to the hashed trace,
/// never hashed, never parsed back from text.
package struct WorldEvent: Sendable {
  package enum What: Sendable {
    /// A user intent (look it up in the log).
    case intent(IntentID)
    /// Message number `message` (counted from 1) left `from` for `to`.
    case sent(message: Int, from: WorldNode, to: WorldNode, Message)
    /// What became of one copy of message `message` at its receiver.
    case arrived(message: Int, at: WorldNode, Arrival, duplicate: Bool)
    /// The server's decision on one write of push `message`. Boxed: its write and result are
    /// far larger than any other case, and every event kept would be as large inline.
    indirect case decided(message: Int, write: RecordWrite, result: WriteResult)
    case device(Int32, DeviceChange)
    case server(up: Bool)
    /// `free SIZE`: the user freed this much iCloud storage.
    case storageFreed(bytes: Int64)
    /// A `reject` line began.
    case rejecting(RejectRule)
    /// The zone was deleted (by a device's user, or by an encrypted-data reset).
    case zoneDeleted(by: Int32?, ZoneDeletionReason)
    /// A share action on a device: carried out (`done`), or refused (offline, signed out, the
    /// server down, or not the device's account's to make).
    indirect case share(Int32, ShareAction, done: Bool)
    /// The server refused a hierarchy share's save because the root's change tag the device
    /// saved it with (`known`) is not the server's (`server`): `share-root=as-known`.
    indirect case shareRefused(Int32, share: Int32, root: RecordKey, known: Int64, server: Int64)
    /// Something a device observed about itself (``DeviceFact``).
    case fact(Int32, DeviceFact)
    case settleStarted
    /// Settle reached quiescence after `rounds` rounds.
    case settled(rounds: Int)
    /// A node's final state after settle: its digest (folded into the trace hash) and how many
    /// records it holds.
    case finalState(WorldNode, digest: UInt64, records: Int)
  }

  package var time: VirtualTime
  package var what: What
}
