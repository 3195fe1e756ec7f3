//! Error: a zyfa status with the library's detail message.
use std::ffi::CStr;
use std::fmt;

/// A zyfa_status other than success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    InvalidArgument,
    NotSupported,
    NoDevice,
    Device,
    OutOfMemory,
    Internal,
    /// A code this binding does not know (from a newer library).
    Unknown(i32),
}

impl Status {
    pub fn from_code(code: i32) -> Status {
        match code {
            zyfa_sys::ZYFA_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            zyfa_sys::ZYFA_ERROR_NOT_SUPPORTED => Status::NotSupported,
            zyfa_sys::ZYFA_ERROR_NO_DEVICE => Status::NoDevice,
            zyfa_sys::ZYFA_ERROR_DEVICE => Status::Device,
            zyfa_sys::ZYFA_ERROR_OUT_OF_MEMORY => Status::OutOfMemory,
            zyfa_sys::ZYFA_ERROR_INTERNAL => Status::Internal,
            other => Status::Unknown(other),
        }
    }

    pub fn code(self) -> i32 {
        match self {
            Status::InvalidArgument => zyfa_sys::ZYFA_ERROR_INVALID_ARGUMENT,
            Status::NotSupported => zyfa_sys::ZYFA_ERROR_NOT_SUPPORTED,
            Status::NoDevice => zyfa_sys::ZYFA_ERROR_NO_DEVICE,
            Status::Device => zyfa_sys::ZYFA_ERROR_DEVICE,
            Status::OutOfMemory => zyfa_sys::ZYFA_ERROR_OUT_OF_MEMORY,
            Status::Internal => zyfa_sys::ZYFA_ERROR_INTERNAL,
            Status::Unknown(code) => code,
        }
    }

    /// The library's short English name ("invalid argument").
    pub fn name(self) -> String {
        unsafe { CStr::from_ptr(zyfa_sys::zyfa_status_string(self.code())) }.to_string_lossy().into_owned()
    }
}

/// A failed zyfa call: its status and the detail naming the offending field and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error found by this binding before calling the library (same statuses as the library's).
    pub fn invalid(message: impl Into<String>) -> Error {
        Error { status: Status::InvalidArgument, message: message.into() }
    }

    /// Turns a status code into Ok or into this thread's last error message.
    pub(crate) fn check(code: i32) -> Result<()> {
        if code == zyfa_sys::ZYFA_SUCCESS {
            return Ok(());
        }
        let message = unsafe { CStr::from_ptr(zyfa_sys::zyfa_last_error_message()) }.to_string_lossy().into_owned();
        Err(Error { status: Status::from_code(code), message })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status.name())
        } else {
            write!(f, "{}: {}", self.status.name(), self.message)
        }
    }
}

impl std::error::Error for Error {}
