//! What a command reads beyond its flags: a file, or stdin for `-` (a
//! secret or a long JSON value stays off the command line, where other
//! users of the machine see it with `ps`).

use std::io::Read as _;

use super::exit;

/// The contents of `path`, or of stdin for `-` or none.
pub fn read_file_or_stdin(path: Option<&std::path::Path>) -> anyhow::Result<String> {
    let mut text = String::new();
    match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => {
            text = std::fs::read_to_string(p)
                .map_err(|e| exit::usage(format!("reading {}: {e}", p.display())))?
        }
        None => {
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| exit::usage(format!("reading stdin: {e}")))?;
        }
    }
    Ok(text)
}
