// zyfa declares the few HIP types, values and entry points it uses itself (src/hip/hip_api.hpp), so
// that libzyfa.so builds without ROCm and loads any ROCm with dlopen. Nothing but this file checks
// those declarations against a real HIP header: it is compiled against hip/hip_runtime_api.h
// (Debian 12's libamdhip64-dev, ROCm 5.2.3, in CI) and does not compile when they disagree. The
// program only reports what was checked.
//
// What is checked is what zyfa relies on from every ROCm it may load (5.x to 7.x):
// - each HipApi entry point has the runtime function's ABI: the same number of parameters, and
//   each parameter and the result the same type, or one passed the same way (zyfa's int for a C
//   enum of the same size; its opaque handle structs for HIP's; void* where zyfa erases a pointer
//   type it never looks through);
// - the enum values and flags zyfa passes or compares;
// - the versioned items (docs/hip-runtime.md) for the ROCm generation of the header in use: with
//   ROCm 5's header the R0000 hipDeviceProp_t offsets and hipMemoryType numbering, with ROCm 6's
//   and later the R0600 ones; and the hipPointerAttribute_t layout, which no ROCm changed.
//
// The HIP header is compiled by the host C++ compiler: hip_runtime_api.h alone, with
// __HIP_PLATFORM_AMD__ defined (by CMake), needs no hip-clang.
#include "hip/hip_api.hpp"

#include <cstddef>
#include <cstdio>
#include <tuple>
#include <type_traits>

// hip_runtime_api.h #defines some names that hip_api.hpp also uses: hipStreamNonBlocking (a
// constant here, a macro there) and, from ROCm 6 on, hipGetDeviceProperties (a HipApi member here,
// #defined to hipGetDevicePropertiesR0600 there). zyfa's are read before that header is included.
namespace zyfa_values {
constexpr unsigned stream_non_blocking = zyfa::hip::hipStreamNonBlocking;
using GetDeviceProperties = decltype(zyfa::hip::HipApi::hipGetDeviceProperties);
}  // namespace zyfa_values

#include <hip/hip_runtime_api.h>

namespace {

// ---- "passed the same way" ------------------------------------------------------------------

// HIP's type for each of zyfa's own structs.
template <class Zyfa>
struct Counterpart {
    using type = void;  // none: only the same type matches
};
template <>
struct Counterpart<zyfa::hip::ihipModule_t> {
    using type = ::ihipModule_t;
};
template <>
struct Counterpart<zyfa::hip::ihipModuleSymbol_t> {
    using type = ::ihipModuleSymbol_t;
};
template <>
struct Counterpart<zyfa::hip::ihipStream_t> {
    using type = ::ihipStream_t;
};
template <>
struct Counterpart<zyfa::hip::ihipEvent_t> {
    using type = ::ihipEvent_t;
};
template <>
struct Counterpart<zyfa::hip::ihipGraph> {
    using type = ::ihipGraph;
};
template <>
struct Counterpart<zyfa::hip::hipGraphExec> {
    using type = ::hipGraphExec;
};
template <>
struct Counterpart<zyfa::hip::HipPointerAttributes> {
    using type = ::hipPointerAttribute_t;  // its layout is checked field by field below
};

template <class Zyfa, class Hip, class = void>
struct SameAbi : std::is_same<Zyfa, Hip> {};

template <class ZyfaPointee, class HipPointee>
struct SamePointee
    : std::bool_constant<std::is_const<ZyfaPointee>::value == std::is_const<HipPointee>::value &&
                         (std::is_void<std::remove_cv_t<ZyfaPointee>>::value ||
                          std::is_same<typename Counterpart<std::remove_cv_t<ZyfaPointee>>::type,
                                       std::remove_cv_t<HipPointee>>::value ||
                          SameAbi<std::remove_cv_t<ZyfaPointee>, std::remove_cv_t<HipPointee>>::value)> {};

// A pointer: the pointees correspond (recursively: hipModule_t* is ihipModule_t**).
template <class Zyfa, class Hip>
struct SameAbi<Zyfa*, Hip*> : SamePointee<Zyfa, Hip> {};

// A C enum that zyfa passes or receives as an integer of the enum's size (hipError_t as int,
// hipMemcpyKind as int, ...). Its values are compared one by one below.
template <class Zyfa, class Hip>
struct SameAbi<Zyfa, Hip, std::enable_if_t<std::is_integral<Zyfa>::value && std::is_enum<Hip>::value>>
    : std::bool_constant<sizeof(Zyfa) == sizeof(Hip) && sizeof(Zyfa) == sizeof(std::underlying_type_t<Hip>)> {};

// Parameter lists: the same length (else false, not a compile error), each parameter the same ABI.
template <class Zyfa, class Hip>
struct AllSameAbi : std::false_type {};
template <>
struct AllSameAbi<std::tuple<>, std::tuple<>> : std::true_type {};
template <class Z0, class... Z, class H0, class... H>
struct AllSameAbi<std::tuple<Z0, Z...>, std::tuple<H0, H...>>
    : std::bool_constant<SameAbi<Z0, H0>::value && AllSameAbi<std::tuple<Z...>, std::tuple<H...>>::value> {};

template <class Zyfa, class Hip>
struct SameFunctionAbi : std::false_type {};
template <class ZR, class... ZA, class HR, class... HA>
struct SameFunctionAbi<ZR (*)(ZA...), HR (*)(HA...)>
    : std::bool_constant<SameAbi<ZR, HR>::value && AllSameAbi<std::tuple<ZA...>, std::tuple<HA...>>::value> {};

// The checker must be able to fail: a few mismatches it has to see.
static_assert(!SameFunctionAbi<int (*)(int*), hipError_t (*)(int*, int)>::value, "arity");
static_assert(!SameFunctionAbi<int (*)(size_t), hipError_t (*)(unsigned)>::value, "value width");
static_assert(!SameFunctionAbi<int (*)(void*), hipError_t (*)(const void*)>::value, "constness");
static_assert(!SameFunctionAbi<int (*)(zyfa::hip::hipStream_t), hipError_t (*)(hipEvent_t)>::value, "handle");
static_assert(!SameFunctionAbi<long (*)(), hipError_t (*)()>::value, "result width");

int checked_entry_points = 0;
int checked_values = 0;
int checked_layouts = 0;

}  // namespace

// zyfa's HipApi::member against the header's declaration of the function it is loaded from.
#define ZYFA_CHECK_ENTRY(member, hip_function)                                                         \
    static_assert(SameFunctionAbi<decltype(zyfa::hip::HipApi::member), decltype(&::hip_function)>::value, \
                  "HipApi::" #member " does not have the ABI of " #hip_function " in hip_runtime_api.h"); \
    ++checked_entry_points

// The same for a function that C++ overloads in the header (a template convenience next to the C
// entry point): the C declaration is selected by its exact type, so a different C signature fails
// to compile here too.
#define ZYFA_CHECK_OVERLOADED_ENTRY(member, hip_function, c_type)                                       \
    static_assert(SameFunctionAbi<decltype(zyfa::hip::HipApi::member),                                  \
                                  decltype(static_cast<c_type>(&::hip_function))>::value,               \
                  "HipApi::" #member " does not have the ABI of " #hip_function " in hip_runtime_api.h"); \
    ++checked_entry_points

#define ZYFA_CHECK_VALUE(zyfa_value, hip_value)                                                  \
    static_assert(static_cast<long long>(zyfa_value) == static_cast<long long>(hip_value),       \
                  #zyfa_value " differs from " #hip_value " in hip_runtime_api.h");              \
    ++checked_values

#define ZYFA_CHECK_OFFSET(zyfa_offset, hip_struct, hip_field)                                    \
    static_assert((zyfa_offset) == offsetof(hip_struct, hip_field),                              \
                  #zyfa_offset " is not the offset of " #hip_struct "::" #hip_field);            \
    ++checked_layouts

int main() {
    // Every entry point load_api() resolves (src/hip/hip_api.cpp), required and optional.
    ZYFA_CHECK_ENTRY(hipGetErrorString, hipGetErrorString);
    ZYFA_CHECK_ENTRY(hipGetErrorName, hipGetErrorName);
    ZYFA_CHECK_ENTRY(hipGetDeviceCount, hipGetDeviceCount);
    ZYFA_CHECK_ENTRY(hipGetDevice, hipGetDevice);
    ZYFA_CHECK_ENTRY(hipSetDevice, hipSetDevice);
    // ROCm 5's hipGetDeviceProperties, or ROCm 6+'s hipGetDevicePropertiesR0600 (the name a ROCm 6
    // header #defines hipGetDeviceProperties to): the same shape, a struct zyfa reads by offset.
    static_assert(SameFunctionAbi<zyfa_values::GetDeviceProperties, decltype(&::hipGetDeviceProperties)>::value,
                  "HipApi::hipGetDeviceProperties does not have the ABI of hipGetDeviceProperties");
    ++checked_entry_points;
    ZYFA_CHECK_ENTRY(hipModuleLoadData, hipModuleLoadData);
    ZYFA_CHECK_ENTRY(hipModuleUnload, hipModuleUnload);
    ZYFA_CHECK_ENTRY(hipModuleGetFunction, hipModuleGetFunction);
    ZYFA_CHECK_ENTRY(hipModuleLaunchKernel, hipModuleLaunchKernel);
    ZYFA_CHECK_ENTRY(hipPointerGetAttributes, hipPointerGetAttributes);
    ZYFA_CHECK_ENTRY(hipDeviceGetAttribute, hipDeviceGetAttribute);
    ZYFA_CHECK_ENTRY(hipFuncGetAttribute, hipFuncGetAttribute);
    ZYFA_CHECK_OVERLOADED_ENTRY(hipMalloc, hipMalloc, hipError_t (*)(void**, size_t));
    ZYFA_CHECK_ENTRY(hipFree, hipFree);
    ZYFA_CHECK_ENTRY(hipMemcpy, hipMemcpy);
    ZYFA_CHECK_ENTRY(hipMemset, hipMemset);
    ZYFA_CHECK_ENTRY(hipDeviceSynchronize, hipDeviceSynchronize);
    ZYFA_CHECK_ENTRY(hipStreamCreateWithFlags, hipStreamCreateWithFlags);
    ZYFA_CHECK_ENTRY(hipStreamDestroy, hipStreamDestroy);
    ZYFA_CHECK_ENTRY(hipStreamSynchronize, hipStreamSynchronize);
    ZYFA_CHECK_ENTRY(hipEventCreate, hipEventCreate);
    ZYFA_CHECK_ENTRY(hipEventDestroy, hipEventDestroy);
    ZYFA_CHECK_ENTRY(hipEventRecord, hipEventRecord);
    ZYFA_CHECK_ENTRY(hipEventSynchronize, hipEventSynchronize);
    ZYFA_CHECK_ENTRY(hipEventElapsedTime, hipEventElapsedTime);
    ZYFA_CHECK_ENTRY(hipStreamBeginCapture, hipStreamBeginCapture);
    ZYFA_CHECK_ENTRY(hipStreamEndCapture, hipStreamEndCapture);
    ZYFA_CHECK_ENTRY(hipGraphInstantiate, hipGraphInstantiate);
    ZYFA_CHECK_ENTRY(hipGraphLaunch, hipGraphLaunch);
    ZYFA_CHECK_ENTRY(hipGraphDestroy, hipGraphDestroy);
    ZYFA_CHECK_ENTRY(hipGraphExecDestroy, hipGraphExecDestroy);

    // The handle types of hip_api.hpp are HIP's handles.
    static_assert(SameAbi<zyfa::hip::hipModule_t, ::hipModule_t>::value, "hipModule_t");
    static_assert(SameAbi<zyfa::hip::hipFunction_t, ::hipFunction_t>::value, "hipFunction_t");
    static_assert(SameAbi<zyfa::hip::hipStream_t, ::hipStream_t>::value, "hipStream_t");
    static_assert(SameAbi<zyfa::hip::hipEvent_t, ::hipEvent_t>::value, "hipEvent_t");
    static_assert(SameAbi<zyfa::hip::hipGraph_t, ::hipGraph_t>::value, "hipGraph_t");
    static_assert(SameAbi<zyfa::hip::hipGraphExec_t, ::hipGraphExec_t>::value, "hipGraphExec_t");
    static_assert(SameAbi<zyfa::hip::hipError_t, ::hipError_t>::value, "hipError_t");

    // hipError_t: the codes zyfa tells apart (NO_DEVICE, OUT_OF_MEMORY, an unknown pointer).
    ZYFA_CHECK_VALUE(zyfa::hip::hipSuccess, ::hipSuccess);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorInvalidValue, ::hipErrorInvalidValue);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorOutOfMemory, ::hipErrorOutOfMemory);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorNotInitialized, ::hipErrorNotInitialized);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorInsufficientDriver, ::hipErrorInsufficientDriver);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorNoDevice, ::hipErrorNoDevice);
    ZYFA_CHECK_VALUE(zyfa::hip::hipErrorInvalidDevice, ::hipErrorInvalidDevice);
    // The arguments zyfa passes.
    ZYFA_CHECK_VALUE(zyfa::hip::hipMemcpyHostToDevice, ::hipMemcpyHostToDevice);
    ZYFA_CHECK_VALUE(zyfa::hip::hipMemcpyDeviceToHost, ::hipMemcpyDeviceToHost);
    ZYFA_CHECK_VALUE(zyfa_values::stream_non_blocking, hipStreamNonBlocking);
    ZYFA_CHECK_VALUE(zyfa::hip::hipStreamCaptureModeThreadLocal, ::hipStreamCaptureModeThreadLocal);
    ZYFA_CHECK_VALUE(zyfa::hip::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    ZYFA_CHECK_VALUE(zyfa::hip::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, ::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    ZYFA_CHECK_VALUE(zyfa::hip::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, ::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    ZYFA_CHECK_VALUE(zyfa::hip::HIP_FUNC_ATTRIBUTE_NUM_REGS, ::HIP_FUNC_ATTRIBUTE_NUM_REGS);
    ZYFA_CHECK_VALUE(zyfa::hip::hipDeviceAttributeClockRate, ::hipDeviceAttributeClockRate);
    ZYFA_CHECK_VALUE(zyfa::hip::hipDeviceAttributePageableMemoryAccess, ::hipDeviceAttributePageableMemoryAccess);

    // hipPointerAttribute_t: the same layout in every ROCm; only its first field's name changed.
    using zyfa::hip::HipPointerAttributes;
    static_assert(sizeof(HipPointerAttributes) == sizeof(::hipPointerAttribute_t), "hipPointerAttribute_t size");
#if HIP_VERSION_MAJOR >= 6
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, type), hipPointerAttribute_t, type);
#else
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, type), hipPointerAttribute_t, memoryType);
#endif
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, device), hipPointerAttribute_t, device);
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, device_pointer), hipPointerAttribute_t, devicePointer);
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, host_pointer), hipPointerAttribute_t, hostPointer);
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, is_managed), hipPointerAttribute_t, isManaged);
    ZYFA_CHECK_OFFSET(offsetof(HipPointerAttributes, allocation_flags), hipPointerAttribute_t, allocationFlags);

    // The versioned items, for this header's generation; load_api() picks the other generation's
    // constants when it loads the other runtime (hipGetDevicePropertiesR0600 present or not).
#if HIP_VERSION_MAJOR >= 6
    constexpr zyfa::hip::DevicePropLayout props = zyfa::hip::kPropsR0600;
    constexpr zyfa::hip::HipMemoryTypes memory_types = zyfa::hip::kMemoryTypesR0600;
    using DeviceProp = ::hipDeviceProp_tR0600;
#else
    constexpr zyfa::hip::DevicePropLayout props = zyfa::hip::kPropsR0000;
    constexpr zyfa::hip::HipMemoryTypes memory_types = zyfa::hip::kMemoryTypesR0000;
    using DeviceProp = ::hipDeviceProp_t;
#endif
    ZYFA_CHECK_OFFSET(props.name, DeviceProp, name);
    ZYFA_CHECK_OFFSET(props.shared_mem_per_block, DeviceProp, sharedMemPerBlock);
    ZYFA_CHECK_OFFSET(props.multi_processor_count, DeviceProp, multiProcessorCount);
    ZYFA_CHECK_OFFSET(props.gcn_arch_name, DeviceProp, gcnArchName);
    static_assert(sizeof(DeviceProp) <= zyfa::hip::kDevicePropBufferBytes, "the runtime would write past the buffer");
    static_assert(sizeof(DeviceProp::name) == 256 && sizeof(DeviceProp::gcnArchName) == 256,
                  "zyfa reads name and gcnArchName as 256-byte fields");
    static_assert(std::is_same<decltype(DeviceProp::sharedMemPerBlock), size_t>::value &&
                      std::is_same<decltype(DeviceProp::multiProcessorCount), int>::value,
                  "zyfa reads sharedMemPerBlock as size_t and multiProcessorCount as int");
    ++checked_layouts;
    ZYFA_CHECK_VALUE(memory_types.host, ::hipMemoryTypeHost);
    ZYFA_CHECK_VALUE(memory_types.device, ::hipMemoryTypeDevice);

    std::printf("zyfa's HIP declarations (src/hip/hip_api.hpp) match hip_runtime_api.h of HIP %d.%d: %d entry points, "
                "%d values, %d layout facts (the %s hipDeviceProp_t and hipMemoryType)\n",
                HIP_VERSION_MAJOR, HIP_VERSION_MINOR, checked_entry_points, checked_values, checked_layouts,
                HIP_VERSION_MAJOR >= 6 ? "R0600" : "R0000");
    return 0;
}
