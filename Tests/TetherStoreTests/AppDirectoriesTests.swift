import Foundation
import Testing
import TetherTestSupport

@testable import TetherStore

struct AppDirectoriesTests {
    @Test func xdgVariablesPlaceEachFolderWithTheAppsOwnFolderAppended() throws {
        let dirs = try AppDirectories(
            appName: "MyNotes",
            environment: [
                "XDG_DATA_HOME": "/data", "XDG_CONFIG_HOME": "/config", "XDG_CACHE_HOME": "/cache",
                "TMPDIR": "/scratch",
            ],
            homeDirectory: URL(fileURLWithPath: "/home/u")
        )
        #expect(dirs.documents.path == "/data/MyNotes/Documents")
        #expect(dirs.library.path == "/data/MyNotes/Library")
        #expect(dirs.preferences.path == "/config/MyNotes")
        #expect(dirs.caches.path == "/cache/MyNotes")
        #expect(dirs.temporary.path == "/scratch/MyNotes-\(getuid())")
    }

    @Test func emptyOrRelativeXDGValuesFallBackToTheHomeDefaults() throws {
        let dirs = try AppDirectories(
            appName: "MyNotes",
            environment: ["XDG_DATA_HOME": "", "XDG_CONFIG_HOME": "relative/path"],
            homeDirectory: URL(fileURLWithPath: "/home/u")
        )
        #expect(dirs.documents.path == "/home/u/.local/share/MyNotes/Documents")
        #expect(dirs.preferences.path == "/home/u/.config/MyNotes")
        #expect(dirs.caches.path == "/home/u/.cache/MyNotes")
        #expect(dirs.temporary.path == "/tmp/MyNotes-\(getuid())")
    }

    @Test(arguments: ["", ".", "..", "a/b"])
    func invalidAppNamesAreRejected(name: String) async {
        await expectStoreError(.invalidArgument) {
            try AppDirectories(appName: name, environment: [:], homeDirectory: URL(fileURLWithPath: "/home/u"))
        }
    }

    @Test func initCreatesNothingAndCreateDirectoriesMakesPrivateFoldersIdempotently() async throws {
        try await withTemporaryDirectory { root in
            let dirs = try AppDirectories(
                appName: "MyNotes",
                environment: ["TMPDIR": root.appendingPathComponent("tmp").path],
                homeDirectory: root
            )
            #expect(!FileManager.default.fileExists(atPath: dirs.documents.path))
            try dirs.createDirectories()
            try dirs.createDirectories()
            for url in [dirs.documents, dirs.library, dirs.preferences, dirs.caches, dirs.temporary] {
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700, "\(url.path)")
            }
        }
    }

    @Test func aFolderThatCannotBeCreatedIsAnIOError() async throws {
        try await withTemporaryDirectory { root in
            let blocker = root.appendingPathComponent("file")
            try Data().write(to: blocker)
            let dirs = try AppDirectories(appName: "MyNotes", environment: [:], homeDirectory: blocker)
            await expectStoreError(.io) { try dirs.createDirectories() }
        }
    }

    @Test func theProcessEnvironmentInitialiserUsesTheHomeDirectory() throws {
        let dirs = try AppDirectories(appName: "tether")
        #expect(dirs.appName == "tether")
        #expect(dirs.documents.lastPathComponent == "Documents")
        #expect(dirs.documents.deletingLastPathComponent().lastPathComponent == "tether")
    }

    @Test func theHomeIsTheEnvironmentsWhenItIsAnAbsolutePath() {
        #expect(AppDirectories.homeDirectory(["HOME": "/some/dir"]).path == "/some/dir")
        let passwordHome = FileManager.default.homeDirectoryForCurrentUser.path
        #expect(AppDirectories.homeDirectory([:]).path == passwordHome)
        #expect(AppDirectories.homeDirectory(["HOME": ""]).path == passwordHome)
        #expect(AppDirectories.homeDirectory(["HOME": "relative"]).path == passwordHome)
    }
}

extension AppDirectoriesTests {
    @Test func aTemporaryFolderThatIsALinkOrThatOthersMayWriteToIsRefused() async throws {
        try await withTemporaryDirectory { root in
            let tmp = root.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
            let dirs = try AppDirectories(appName: "MyNotes", environment: ["TMPDIR": tmp.path], homeDirectory: root)
            // Made beforehand by someone else's hand: writable by every user.
            try FileManager.default.createDirectory(at: dirs.temporary, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dirs.temporary.path)
            let open = await expectStoreError(.io) { try dirs.createDirectories() }
            #expect(open?.message.contains("not this user's own") == true)
            // A link to a folder elsewhere.
            try FileManager.default.removeItem(at: dirs.temporary)
            let elsewhere = root.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(at: dirs.temporary, withDestinationURL: elsewhere)
            await expectStoreError(.io) { try dirs.createDirectories() }
            // A private folder of another user (only root can make one here).
            try FileManager.default.removeItem(at: dirs.temporary)
            if getuid() == 0 {
                try FileManager.default.createDirectory(
                    at: dirs.temporary,
                    withIntermediateDirectories: false,
                    attributes: [.posixPermissions: 0o700, .ownerAccountID: 65_534]
                )
                await expectStoreError(.io) { try dirs.createDirectories() }
                try FileManager.default.removeItem(at: dirs.temporary)
            }
            // The user's own private folder is taken.
            try dirs.createDirectories()
        }
    }
}
