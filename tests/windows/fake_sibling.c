/* SPDX-License-Identifier: Apache-2.0 */
/* fake_sibling.c -- cl_sibling.dll: the dependency that fake_dep_cudart.c's cudart64_12.dll imports,
 * placed next to it only (test_windows.c's deps_from_same_dir). */
__declspec(dllexport) int cl_sibling_version(void);
__declspec(dllexport) int cl_sibling_version(void) { return 12080; }
