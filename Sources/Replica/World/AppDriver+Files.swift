@_spi(Kernel) import Simulator

/// The hooks an app driver has into a device's asset files (issue 33): the app keeps its own
/// files (`SimDevice.files`), and the driver tells the world what it holds after each step, as
/// the built-in engine's ``DeviceState/files`` would say.
extension AppDriver {
  /// Nothing: a driver of an app that keeps no files.
  package func filesChangedByTheWorld(stagingPurged: Bool, deleted name: String?) {}
}

extension DeviceState {
  /// For an app driver: after the app's step, the device holds the file of the asset named
  /// `name` in the app's container (`own`), in the staging area (`staged`), or not at all. A file
  /// that goes is one the app deleted (``lostFiles``); the change is reported in `effects` as a
  /// raw observation.
  package mutating func driverSetFile(_ name: String, own: Bool, staged: Bool, at now: VirtualTime, effects: inout [DeviceEffect]) {
    let held: AssetFile? = own ? .own : staged ? .staged : nil
    if files[name] != nil, held == nil { lostFiles[name] = (.deletedByApp, now) }
    files[name] = held
    effects.append(.appFile(name: name, own: own, staged: staged))
  }

  /// For an app driver: its engine sent a push now (an upload reads its files while the request
  /// travels: a file changed after this is `assetFileModified`).
  package mutating func driverSentPush(at now: VirtualTime) { pushSentAt = now }
}

extension SyncWorld {
  /// Tells device `d`'s app driver, if it has one, that the world changed its files.
  func tellDriverOfFiles(device d: Int32, stagingPurged: Bool, deleted name: String?) {
    guard !drivers.isEmpty, let box = drivers[Int(d)] else { return }
    box.driver.filesChangedByTheWorld(stagingPurged: stagingPurged, deleted: name)
  }
}
