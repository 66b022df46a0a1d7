//! Physical memory: the frame allocator over the bootloader's memory map.
pub mod frames;
