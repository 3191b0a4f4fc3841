import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads passwords from stdin or a no-echo terminal prompt; never from the command line,
/// where they would land in shell history and `ps`.
enum PasswordInput {
    static func read(fromStdin: Bool, prompt: String = "Password: ") throws -> String {
        let password: String?
        if fromStdin {
            password = readLine(strippingNewline: true)
        } else {
            guard let first = promptWithoutEcho(prompt) else { throw ValidationError("No password given.") }
            guard promptWithoutEcho("Repeat password: ") == first else {
                throw ValidationError("The passwords do not match.")
            }
            password = first
        }
        guard let password, !password.isEmpty else { throw ValidationError("The password must not be empty.") }
        return password
    }

    private static func promptWithoutEcho(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        let isTerminal = tcgetattr(STDIN_FILENO, &original) == 0
        if isTerminal {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        }
        defer {
            if isTerminal {
                tcsetattr(STDIN_FILENO, TCSANOW, &original)
                FileHandle.standardError.write(Data("\n".utf8))
            }
        }
        return readLine(strippingNewline: true)
    }
}
