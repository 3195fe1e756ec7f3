//! Tensor views: a borrowed slice (or, unsafely, a raw device pointer) with its shape and element
//! strides, checked so that every element the library may touch lies inside the slice.
use std::marker::PhantomData;
use std::os::raw::c_void;

use crate::error::{Error, Result};
use crate::numbers::{DType, Element};

/// [batch, seq, heads, dim], or packed sequences [total, heads, dim] (with cu_seqlens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Batched([usize; 4]),
    Packed([usize; 3]),
}

impl Shape {
    pub fn heads(&self) -> usize {
        match self {
            Shape::Batched(s) => s[2],
            Shape::Packed(s) => s[1],
        }
    }
    pub fn dim(&self) -> usize {
        match self {
            Shape::Batched(s) => s[3],
            Shape::Packed(s) => s[2],
        }
    }
    /// Rows along the sequence axis: seq for batched, total for packed.
    pub fn rows(&self) -> usize {
        match self {
            Shape::Batched(s) => s[1],
            Shape::Packed(s) => s[0],
        }
    }
    fn contiguous_strides(&self) -> [i64; 3] {
        match *self {
            Shape::Batched([_, s, h, d]) => [(s * h * d) as i64, (h * d) as i64, d as i64],
            Shape::Packed([_, h, d]) => [0, (h * d) as i64, d as i64],
        }
    }
    fn extents(&self) -> [usize; 4] {
        match *self {
            Shape::Batched(s) => s,
            Shape::Packed([t, h, d]) => [1, t, h, d],
        }
    }
}

/// Number of elements a view of `shape` with `strides` (batch, seq, head; dim contiguous) spans.
fn span(shape: &Shape, strides: [i64; 3]) -> Result<usize> {
    let e = shape.extents();
    if e.iter().any(|&x| x == 0) {
        return Ok(0);
    }
    let mut last: i64 = e[3] as i64 - 1;
    for axis in 0..3 {
        if strides[axis] < 0 {
            return Err(Error::invalid(format!("stride {} of axis {} is negative", strides[axis], axis)));
        }
        let step = (e[axis] as i64 - 1)
            .checked_mul(strides[axis])
            .and_then(|x| x.checked_add(last))
            .ok_or_else(|| Error::invalid("the view's extent overflows"))?;
        last = step;
    }
    Ok(last as usize + 1)
}

fn raw_tensor(data: *mut c_void, dtype: DType, strides: [i64; 3]) -> zyfa_sys::zyfa_tensor {
    zyfa_sys::zyfa_tensor {
        data,
        dtype: dtype.code(),
        reserved: 0,
        stride_batch: strides[0],
        stride_seq: strides[1],
        stride_head: strides[2],
    }
}

/// A read-only view of an input (q, k, v, or the input of quantize_fp8).
#[derive(Debug, Clone, Copy)]
pub struct Tensor<'a> {
    pub(crate) raw: zyfa_sys::zyfa_tensor,
    pub(crate) shape: Shape,
    pub(crate) host: bool,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> Tensor<'a> {
    /// A contiguous [batch, seq, heads, dim] view of `data`.
    pub fn new<T: Element>(data: &'a [T], shape: [usize; 4]) -> Result<Tensor<'a>> {
        Self::with_strides(data, Shape::Batched(shape), Shape::Batched(shape).contiguous_strides())
    }

    /// A contiguous packed [total, heads, dim] view (for cu_seqlens problems).
    pub fn packed<T: Element>(data: &'a [T], shape: [usize; 3]) -> Result<Tensor<'a>> {
        Self::with_strides(data, Shape::Packed(shape), Shape::Packed(shape).contiguous_strides())
    }

    /// A strided view: strides in elements for (batch, seq, head); the dim axis is contiguous.
    /// For a packed shape the batch stride is ignored.
    pub fn with_strides<T: Element>(data: &'a [T], shape: Shape, strides: [i64; 3]) -> Result<Tensor<'a>> {
        let needed = span(&shape, strides)?;
        if needed > data.len() {
            return Err(Error::invalid(format!(
                "a view of shape {:?} with strides {:?} spans {} elements; the slice has {}",
                shape, strides, needed, data.len()
            )));
        }
        Ok(Tensor {
            raw: raw_tensor(data.as_ptr() as *mut c_void, T::DTYPE, strides),
            shape,
            host: true,
            _borrow: PhantomData,
        })
    }

    /// A view of device memory for the GPU backends.
    ///
    /// # Safety
    /// `data` must point to memory of the context's device holding every element the shape and
    /// strides address, valid until the stream work that reads it has completed.
    pub unsafe fn from_device_ptr(data: *const c_void, dtype: DType, shape: Shape, strides: [i64; 3]) -> Tensor<'a> {
        Tensor { raw: raw_tensor(data as *mut c_void, dtype, strides), shape, host: false, _borrow: PhantomData }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }
    pub fn as_raw(&self) -> &zyfa_sys::zyfa_tensor {
        &self.raw
    }
}

/// A writable, contiguous view of an output (attention's o, quantize_fp8's result).
#[derive(Debug)]
pub struct TensorMut<'a> {
    pub(crate) raw: zyfa_sys::zyfa_tensor,
    pub(crate) shape: Shape,
    pub(crate) host: bool,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a> TensorMut<'a> {
    /// A contiguous [batch, seq, heads, dim] output.
    pub fn new<T: Element>(data: &'a mut [T], shape: [usize; 4]) -> Result<TensorMut<'a>> {
        Self::of_shape(data, Shape::Batched(shape))
    }

    /// A contiguous packed [total, heads, dim] output.
    pub fn packed<T: Element>(data: &'a mut [T], shape: [usize; 3]) -> Result<TensorMut<'a>> {
        Self::of_shape(data, Shape::Packed(shape))
    }

    fn of_shape<T: Element>(data: &'a mut [T], shape: Shape) -> Result<TensorMut<'a>> {
        let strides = shape.contiguous_strides();
        let needed = span(&shape, strides)?;
        if needed > data.len() {
            return Err(Error::invalid(format!("an output of shape {:?} needs {} elements; the slice has {}",
                                              shape, needed, data.len())));
        }
        Ok(TensorMut { raw: raw_tensor(data.as_mut_ptr() as *mut c_void, T::DTYPE, strides), shape, host: true,
                       _borrow: PhantomData })
    }

    /// A view of device memory for the GPU backends.
    ///
    /// # Safety
    /// As [`Tensor::from_device_ptr`], and no other access to that memory while the work runs.
    pub unsafe fn from_device_ptr(data: *mut c_void, dtype: DType, shape: Shape, strides: [i64; 3]) -> TensorMut<'a> {
        TensorMut { raw: raw_tensor(data, dtype, strides), shape, host: false, _borrow: PhantomData }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }
    pub fn as_raw(&self) -> &zyfa_sys::zyfa_tensor {
        &self.raw
    }
}
